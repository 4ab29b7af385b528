import Redis, { Cluster } from 'ioredis';
import { DEFAULTS, InvalidArgumentError, MAX_TIME_MS, RedissonClient, type RLock } from '../lib';
import { useRedis } from './helpers/fixture';
import { commandCounts, commandsBetween } from './helpers/redis-server';

const { admin, client } = useRedis();

const badTimes: unknown[] = [-1, NaN, Infinity, -Infinity, 1.5, MAX_TIME_MS + 1, '100', null];

describe('input validation', () => {
  let lock: RLock;
  let before: Map<string, number>;

  beforeEach(async () => {
    lock = client().getLock('validated');
    before = await commandCounts(admin());
  });
  afterEach(async () => {
    expect(commandsBetween(before, await commandCounts(admin()))).toEqual({});
  });

  it.each(badTimes)('rejects waitTime %p', async (waitTime) => {
    await expect(lock.tryLock({ waitTime } as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(lock.acquire({ waitTime } as never)).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it.each([...badTimes, 0])('rejects leaseTime %p', async (leaseTime) => {
    await expect(lock.lock({ leaseTime } as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(lock.tryLock({ leaseTime } as never)).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it.each([0, -3, 1.5, NaN, Number.MAX_SAFE_INTEGER + 1, '7'])('rejects threadId %p', async (threadId) => {
    await expect(lock.lock({ threadId } as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(lock.unlock({ threadId } as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(lock.isHeldByThread(threadId as never)).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it('rejects unknown options, options that are not objects, and a signal that is not an AbortSignal', async () => {
    await expect(lock.lock({ waitTime: 10 } as never)).rejects.toThrow(/Unknown lock options: waitTime/);
    await expect(lock.tryLock({ lease: 10 } as never)).rejects.toThrow(/Unknown lock options: lease/);
    await expect(lock.tryLock('fast' as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(lock.tryLock({ signal: {} } as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(lock.unlock({ leaseTime: 5 } as never)).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it.each(['', 42, null, undefined, { name: 'x' }, 'a{b', 'a{}b', 'bad\uD800name', 'x'.repeat(65_537), 'a}b'])('rejects lock name %p', (name) => {
    expect(() => client().getLock(name as never)).toThrow(InvalidArgumentError);
  });

  it('gives every validation error the ERR_INVALID_ARGUMENT code and a readable message', async () => {
    const error = await lock.tryLock({ waitTime: -5 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'ERR_INVALID_ARGUMENT', name: 'InvalidArgumentError' });
    expect((error as Error).message).toBe('waitTime must be an integer from 0 to 2147483647 ms, got -5');
  });
});

describe('client options', () => {
  const redis = new Redis({ lazyConnect: true });
  afterAll(() => redis.disconnect());

  it('refuses a keyPrefix without a hash tag on a Cluster, where an object and its channel would hash to different slots', () => {
    const untagged = new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true, keyPrefix: 'app:' });
    const nested = new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true, redisOptions: { keyPrefix: 'a{}b:' } });
    const tagged = new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true, keyPrefix: '{app}:' });
    try {
      expect(() => new RedissonClient(untagged)).toThrow(InvalidArgumentError);
      expect(() => new RedissonClient(untagged)).toThrow(/keyPrefix 'app:' on a Cluster needs a hash tag, such as '\{app\}:'/);
      expect(() => new RedissonClient(nested)).toThrow(InvalidArgumentError);
      expect(() => new RedissonClient(tagged, { shardedPubSub: 'off' })).not.toThrow();
      // A standalone server has one slot: any prefix goes.
      expect(() => new RedissonClient(new Redis({ lazyConnect: true, keyPrefix: 'app:' }))).not.toThrow();
    } finally {
      for (const cluster of [untagged, nested, tagged]) cluster.disconnect();
    }
  });

  it('fills in frozen defaults equal to Redisson\'s', () => {
    const redisson = new RedissonClient(redis);
    expect(redisson.options).toEqual({
      lockWatchdogTimeout: 30_000,
      lockWatchdogBatchSize: 100,
      fairLockWaitTimeout: 300_000,
      fairLockChannelLinger: 250,
      subscriptionTimeout: 7_500,
      replyGrace: 250,
      shardedPubSub: 'auto',
      logger: DEFAULTS.logger,
      replicaSync: { enabled: true, timeout: 1_000, replicas: 'connected', retries: 3, retryDelay: 200, aof: false },
    });
    expect(Object.isFrozen(redisson.options.replicaSync)).toBe(true);
    expect(() => redisson.options.logger.debug('dropped')).not.toThrow();
    expect(Object.isFrozen(DEFAULTS)).toBe(true);
    expect(Object.isFrozen(redisson.options)).toBe(true);
  });

  it.each([
    { lockWatchdogTimeout: 0 },
    { lockWatchdogTimeout: 1.5 },
    { lockWatchdogTimeout: MAX_TIME_MS + 1 },
    { lockWatchdogBatchSize: 0 },
    { fairLockWaitTimeout: 0 },
    { fairLockWaitTimeout: 2.5 },
    { fairLockChannelLinger: -1 },
    { subscriptionTimeout: -1 },
    { replyGrace: -1 },
    { shardedPubSub: 'yes' },
    { watchdog: 1000 },
    { replicaSync: 'on' },
    { replicaSync: { enabled: 'auto' } },
    { replicaSync: { aof: 'yes' } },
    { replicaSync: { timeout: 0 } },
    { replicaSync: { replicas: 0 } },
    { replicaSync: { replicas: 'all' } },
    { replicaSync: { retries: -1 } },
    { replicaSync: { retryDelay: 1.5 } },
    { replicaSync: { wait: 1 } },
  ])('rejects %p', (options) => {
    expect(() => new RedissonClient(redis, options as never)).toThrow(InvalidArgumentError);
  });

  it('merges partial replicaSync options over the defaults', () => {
    const redisson = new RedissonClient(redis, { replicaSync: { timeout: 250, replicas: 2 } });
    expect(redisson.options.replicaSync).toEqual({ enabled: true, timeout: 250, replicas: 2, retries: 3, retryDelay: 200, aof: false });
  });

  it('rejects something that is not an ioredis connection', () => {
    expect(() => new RedissonClient({} as never)).toThrow(InvalidArgumentError);
  });
});
