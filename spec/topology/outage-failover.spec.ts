import calculateSlot from 'cluster-key-slot';
import { RedisUnavailableError, RedissonClient } from '../../lib';
import { useCluster } from '../helpers/cluster';

/*
 * Cluster failover within the wait (issue 21): the primary serving the primitives' slot is killed
 * and a replica promoted. Meanwhile ioredis answers "Too many Cluster redirections" (its own retries
 * on the dead node run out) and the nodes CLUSTERDOWN; the acquisitions try again on the back-off
 * inside their `waitTime` and get through once the replica serves, instead of throwing at once.
 */

const cluster = useCluster({ masters: 3, replicas: 1, nodeTimeout: 2_000 });
/** Longer than a failover with a 2 s node timeout takes, on a loaded machine. */
const WAIT = 30_000;
const TAG = '{failover}';

it('lock kinds, the expirable semaphore and the latch get through a failover of their primary inside waitTime', async () => {
  const redis = cluster().connect();
  const redisson = new RedissonClient(redis);
  const logged: string[] = [];
  const watched = new RedissonClient(cluster().connect(), { logger: { debug: (message) => logged.push(message) } });
  try {
    await redisson.getPermitExpirableSemaphore(`psem${TAG}`).trySetPermits(1);
    await redisson.getLock(`warm${TAG}`).using(() => undefined);
    const owner = await cluster().ownerOf(calculateSlot(TAG.slice(1, -1)));
    await cluster().kill(owner);
    const startedAt = performance.now();
    const calls: Record<string, Promise<unknown>> = {
      lock: watched.getLock(`lock${TAG}`).tryLock({ waitTime: WAIT, leaseTime: 10_000 }),
      fair: watched.getFairLock(`fair${TAG}`).tryLock({ waitTime: WAIT, leaseTime: 10_000 }),
      write: watched.getReadWriteLock(`rw${TAG}`).writeLock().tryLock({ waitTime: WAIT, leaseTime: 10_000 }),
      fenced: watched.getFencedLock(`fenced${TAG}`).tryLock({ waitTime: WAIT, leaseTime: 10_000 }),
      spin: watched.getSpinLock(`spin${TAG}`).tryLock({ waitTime: WAIT, leaseTime: 10_000 }),
      'expirable semaphore': watched
        .getPermitExpirableSemaphore(`psem${TAG}`)
        .tryAcquire({ waitTime: WAIT, leaseTime: 10_000 })
        .then((handle) => handle !== null),
      latch: watched.getCountDownLatch(`latch${TAG}`).await({ waitTime: WAIT }), // no count: open
    };
    const outcomes = Object.fromEntries(
      await Promise.all(Object.entries(calls).map(async ([kind, call]) => [kind, await call.catch((error: unknown) => String(error))])),
    );
    const ms = Math.round(performance.now() - startedAt);
    process.stdout.write(`\nfailover: every call through in ${ms} ms: ${JSON.stringify(outcomes)}\n`);
    expect(outcomes).toEqual(Object.fromEntries(Object.keys(calls).map((kind) => [kind, true])));
    expect(ms).toBeLessThan(WAIT);
    // They did meet the failover: at least one attempt failed in transit and was tried again.
    expect(logged.some((message) => message.includes('failed in transit'))).toBe(true);
  } finally {
    await Promise.all([redisson.shutdown(), watched.shutdown()]);
  }
});

it('a plain semaphore attempt whose outcome is unknown is not sent twice: it rejects with RedisUnavailableError or gets through', async () => {
  const redisson = new RedissonClient(cluster().connect());
  try {
    await cluster().settle();
    const semaphore = redisson.getSemaphore(`sem${TAG}`);
    await semaphore.trySetPermits(2);
    const owner = await cluster().ownerOf(calculateSlot(TAG.slice(1, -1)));
    await cluster().kill(owner);
    const outcome = await semaphore.tryAcquire({ waitTime: WAIT }).catch((error: unknown) => error);
    if (outcome instanceof Error) expect(outcome).toBeInstanceOf(RedisUnavailableError);
    else expect(outcome).not.toBeNull();
  } finally {
    await redisson.shutdown();
  }
});
