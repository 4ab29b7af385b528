import type Redis from 'ioredis';
import { InvalidArgumentError, MAX_TIME_MS, RedissonClient, type RLock } from '../lib';
import { useRedis } from './helpers/fixture';
import { commandCounts, commandsBetween, eventually } from './helpers/redis-server';

/*
 * Hostile input through the public API. Bad input must fail with InvalidArgumentError naming the
 * offending field before anything is sent to Redis; strange but valid names must work as plain data.
 */

const { admin, client, server } = useRedis();

/** Runs `call` (sync or async) and returns what it threw or rejected with. */
async function failure(call: () => unknown): Promise<unknown> {
  try {
    await call();
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail, it succeeded');
}

async function expectInvalid(call: () => unknown, mentions: string | RegExp): Promise<void> {
  const error = await failure(call);
  expect(error).toBeInstanceOf(InvalidArgumentError);
  expect(error).toMatchObject({ code: 'ERR_INVALID_ARGUMENT', name: 'InvalidArgumentError' });
  expect((error as Error).message).toMatch(mentions);
}

type Call = (lock: RLock, options: unknown) => Promise<unknown>;
const noop = (): undefined => undefined;
/** Every lock method taking acquisition options, with `options` in the options position. */
const ACQUIRING: Record<string, Call> = {
  lock: (lock, o) => lock.lock(o as never),
  tryLock: (lock, o) => lock.tryLock(o as never),
  acquire: (lock, o) => lock.acquire(o as never),
  tryAcquire: (lock, o) => lock.tryAcquire(o as never),
  using: (lock, o) => lock.using(noop, o as never),
};
const WAITING = ['tryLock', 'acquire', 'tryAcquire', 'using'] as const;
/** Methods taking owner options only. */
const OWNER: Record<string, Call> = {
  unlock: (lock, o) => lock.unlock(o as never),
  getHoldCount: (lock, o) => lock.getHoldCount(o as never),
};

const BAD_TIMES: [string, unknown][] = [
  ['-1', -1],
  ['-0.5', -0.5],
  ['NaN', NaN],
  ['Infinity', Infinity],
  ['-Infinity', -Infinity],
  ['1.5', 1.5],
  ['2^31', 2 ** 31],
  ['2^53', 2 ** 53],
  ['bigint', 10n],
  ['numeric string', '100'],
  ['empty string', ''],
  ['boolean', true],
  ['object', {}],
  ['array', [100]],
  ['Symbol', Symbol('t')],
  ['null', null],
];

describe('hostile input is rejected before reaching Redis', () => {
  let redis: Redis;
  let redisson: RedissonClient;
  let lock: RLock;
  let before: Map<string, number>;

  beforeAll(async () => {
    redis = server().connect();
    await eventually(() => redis.status === 'ready', 10_000, 'connection ready');
  });
  beforeEach(async () => {
    redisson = new RedissonClient(redis);
    lock = redisson.getLock('hostile');
    before = await commandCounts(admin());
  });
  afterEach(async () => {
    await redisson.shutdown();
    expect(commandsBetween(before, await commandCounts(admin()))).toEqual({});
  });

  it.each<[string, unknown, RegExp]>([
    ['empty', '', /^name must be a non-empty string/],
    ['1 MB', 'x'.repeat(1 << 20), /^name is 1048576 bytes long; the limit is 65536/],
    ['65 538 UTF-8 bytes in 32 769 chars', 'é'.repeat(32_769), /^name is 65538 bytes/],
    ['a lone high surrogate', '\uD800', /^name must be well-formed Unicode/],
    ['a lone low surrogate inside', 'ok\uDC00ok', /^name must be well-formed Unicode/],
    ['reversed surrogates', '\uDC00\uD800', /^name must be well-formed Unicode/],
    ['"a{b"', 'a{b', /^name "a\{b" has braces that do not form a hash tag/],
    ['"a{}b"', 'a{}b', /^name "a\{\}b" has braces/],
    ['"}{"', '}{', /^name "\}\{" has braces/],
    ['"{"', '{', /^name "\{" has braces/],
    ['"a}b" (no tag once wrapped in braces)', 'a}b', /^name "a\}b" has braces/],
    ['a number', 42, /^name must be a non-empty string/],
    ['NaN', NaN, /^name must be a non-empty string/],
    ['an object', {}, /^name must be a non-empty string/],
    ['a String object', new String('boxed'), /^name must be a non-empty string/],
    ['a Symbol', Symbol('lock'), /^name must be a non-empty string/],
    ['null', null, /^name must be a non-empty string/],
    ['undefined', undefined, /^name must be a non-empty string/],
    ['an empty array', [], /^name must be a non-empty string/],
    ['an array of a string', ['a'], /^name must be a non-empty string/],
    ['a Buffer', Buffer.from('buffered'), /^name must be a non-empty string/],
    ['a bigint', 7n, /^name must be a non-empty string/],
    ['a function', () => 'name', /^name must be a non-empty string/],
  ])('getLock throws synchronously for a name that is %s', async (_label, name, message) => {
    expect(() => redisson.getLock(name as never)).toThrow(InvalidArgumentError);
    await expectInvalid(() => redisson.getLock(name as never), message);
  });

  it.each(BAD_TIMES)('rejects waitTime %s in every waiting method', async (_label, waitTime) => {
    for (const method of WAITING) {
      await expectInvalid(() => ACQUIRING[method]!(lock, { waitTime }), /^waitTime must be an integer from 0 to 2147483647 ms, got /);
    }
  });

  it.each([...BAD_TIMES, ['0', 0] as [string, unknown]])('rejects leaseTime %s in every acquiring method', async (_label, leaseTime) => {
    for (const call of Object.values(ACQUIRING)) {
      await expectInvalid(() => call(lock, { leaseTime }), /^leaseTime must be an integer from 1 to 2147483647 ms, got /);
    }
  });

  it.each<[string, unknown]>([
    ['"1"', '1'],
    ['0', 0],
    ['-1', -1],
    ['1.5', 1.5],
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['2^53', 2 ** 53],
    ['bigint', 1n],
    ['object', {}],
    ['null', null],
    ['boolean', true],
    ['Symbol', Symbol('thread')],
  ])('rejects threadId %s everywhere it is accepted', async (_label, threadId) => {
    const message = /^threadId must be a positive safe integer, got /;
    for (const call of [...Object.values(ACQUIRING), ...Object.values(OWNER)]) {
      await expectInvalid(() => call(lock, { threadId }), message);
    }
    await expectInvalid(() => lock.isHeldByThread(threadId as never), message);
  });

  it.each<[string, unknown]>([
    ['{}', {}],
    ['a look-alike', { aborted: false, reason: undefined, addEventListener: noop, removeEventListener: noop }],
    ['an EventTarget', new EventTarget()],
    ['an AbortController', new AbortController()],
    ['a string', 'abort'],
    ['null', null],
  ])('rejects signal %s', async (_label, signal) => {
    for (const call of Object.values(ACQUIRING)) {
      await expectInvalid(() => call(lock, { signal }), /^signal must be an AbortSignal/);
    }
  });

  it.each<[string, unknown]>([
    ['a string', 'fast'],
    ['an empty string', ''],
    ['a number', 5],
    ['a boolean', true],
    ['an array', [{ leaseTime: 100 }]],
    ['null', null],
    ['a function', () => ({})],
    ['a Symbol', Symbol('options')],
  ])('rejects options that are %s', async (_label, options) => {
    for (const call of [...Object.values(ACQUIRING), ...Object.values(OWNER)]) {
      await expectInvalid(() => call(lock, options), /^lock options must be an object/);
    }
  });

  it('rejects unknown option keys, naming them', async () => {
    const cases: [Call, object, string][] = [
      [ACQUIRING.lock!, { waitTime: 10 }, 'waitTime'],
      [ACQUIRING.lock!, { leasetime: 10 }, 'leasetime'],
      [ACQUIRING.tryLock!, { timeout: 10, lease: 5 }, 'timeout, lease'],
      [ACQUIRING.acquire!, { threadID: 1 }, 'threadID'],
      [ACQUIRING.tryAcquire!, { waitTime: 0, extra: undefined }, 'extra'],
      [ACQUIRING.using!, JSON.parse('{"__proto__": {"leaseTime": 1}}'), '__proto__'],
      [OWNER.unlock!, { leaseTime: 5 }, 'leaseTime'],
      [OWNER.getHoldCount!, { signal: new AbortController().signal }, 'signal'],
    ];
    for (const [call, options, keys] of cases) {
      await expectInvalid(() => call(lock, options), `Unknown lock options: ${keys} (allowed: `);
    }
  });

  it('rejects symbol keys', async () => {
    await expectInvalid(() => lock.tryLock({ [Symbol('x')]: 1 }), /^Unknown lock options: Symbol\(x\)/);
  });

  it('describes values that cannot be turned into strings instead of failing with a TypeError', async () => {
    const bare = Object.create(null) as unknown;
    await expectInvalid(() => lock.tryLock({ leaseTime: bare } as never), /^leaseTime must be an integer .* got a value of type object/);
    await expectInvalid(() => lock.lock({ threadId: bare } as never), /^threadId must be a positive safe integer, got a value of type object/);
  });

  it('rejects a using() callback that is not a function, taking no lock', async () => {
    await expectInvalid(() => lock.using(42 as never), /^using\(\) needs a function/);
  });

  it('rejects a run() callback that is not a function', async () => {
    for (const fn of ['task', null, undefined, {}, Promise.resolve(), 42]) {
      await expectInvalid(() => redisson.run(fn as never), /^run\(\) needs a function/);
    }
  });

  it.each<[string, unknown, RegExp]>([
    ['a string', 'lockWatchdogTimeout=1', /^RedissonClient options must be an object/],
    ['an array', [], /^RedissonClient options must be an object/],
    ['null', null, /^RedissonClient options must be an object/],
    ['a number', 30_000, /^RedissonClient options must be an object/],
    ['an unknown key', { watchdogTimeout: 10 }, /^Unknown RedissonClient options: watchdogTimeout \(allowed: /],
    ['a mis-cased key', { lockWatchdogtimeout: 10 }, /^Unknown RedissonClient options: lockWatchdogtimeout/],
    ['an ioredis option', { keyPrefix: 'app:' }, /^Unknown RedissonClient options: keyPrefix/],
    ['lockWatchdogTimeout 0', { lockWatchdogTimeout: 0 }, /^lockWatchdogTimeout must be an integer from 1 to 2147483647 ms, got 0/],
    ['lockWatchdogTimeout NaN', { lockWatchdogTimeout: NaN }, /^lockWatchdogTimeout must be .* got NaN/],
    ['lockWatchdogTimeout "30000"', { lockWatchdogTimeout: '30000' }, /^lockWatchdogTimeout must be .* got "30000"/],
    ['lockWatchdogTimeout 2^31', { lockWatchdogTimeout: 2 ** 31 }, /^lockWatchdogTimeout must be /],
    ['lockWatchdogTimeout bigint', { lockWatchdogTimeout: 30_000n }, /^lockWatchdogTimeout must be /],
    ['lockWatchdogTimeout null', { lockWatchdogTimeout: null }, /^lockWatchdogTimeout must be .* got null/],
    ['lockWatchdogBatchSize 10 001', { lockWatchdogBatchSize: 10_001 }, /^lockWatchdogBatchSize must be an integer from 1 to 10000, got 10001/],
    ['lockWatchdogBatchSize 2.5', { lockWatchdogBatchSize: 2.5 }, /^lockWatchdogBatchSize must be /],
    ['lockWatchdogBatchSize -1', { lockWatchdogBatchSize: -1 }, /^lockWatchdogBatchSize must be /],
    ['subscriptionTimeout Infinity', { subscriptionTimeout: Infinity }, /^subscriptionTimeout must be .* got Infinity/],
    ['subscriptionTimeout Symbol', { subscriptionTimeout: Symbol('t') }, /^subscriptionTimeout must be .* got Symbol\(t\)/],
    ['shardedPubSub "ON"', { shardedPubSub: 'ON' }, /^shardedPubSub must be one of auto, on, off/],
    ['shardedPubSub true', { shardedPubSub: true }, /^shardedPubSub must be one of/],
    ['shardedPubSub null', { shardedPubSub: null }, /^shardedPubSub must be one of/],
  ])('new RedissonClient rejects client options that are %s', async (_label, options, message) => {
    expect(() => new RedissonClient(redis, options as never)).toThrow(InvalidArgumentError);
    await expectInvalid(() => new RedissonClient(redis, options as never), message);
  });
});

/** Redisson's channel rule: the name as is when it contains `{`, else wrapped in braces. */
const channelOf = (name: string): string =>
  name.includes('{') ? `redisson_lock__channel:${name}` : `redisson_lock__channel:{${name}}`;

describe('strange but valid names are plain data', () => {
  let listener: Redis;
  const messages: [string, string][] = [];

  beforeAll(async () => {
    listener = server().connect();
    listener.on('pmessage', (_pattern: string, channel: string, message: string) => messages.push([channel, message]));
    await listener.psubscribe('*');
  });
  beforeEach(() => {
    messages.length = 0;
  });

  it.each<[string, string]>([
    ['single and double quotes, backticks', `it's a "quoted" \`name\``],
    ['Lua code', "'); redis.call('flushall'); --"],
    ['Lua long brackets', ']]--[[ [==[ ]=]'],
    ['percent signs', '100% %s %d %%'],
    ['a bare --', '--'],
    ['newlines', 'line1\nline2\r\n'],
    ['spaces', '  spaced   out  '],
    ['a tab and a NUL', 'tab\there\0nul'],
    ['glob characters', '*?[a-z]\\'],
    ['unicode', 'ключ-锁-Ωμέγα-ﬁ'],
    ['emoji with ZWJ and variation selectors', '🔒🗝️👩‍💻'],
    ['a valid {tag}', 'order:{42}:lines'],
    ['only a {tag}', '{tenant}'],
    ['an emoji {tag}', 'x{🔒}y'],
    ['a tag then a stray brace', 'a{b}c{'],
    ['64 KiB of ASCII', 'k'.repeat(65_536)],
    ['64 KiB of 4-byte emoji', '🔒'.repeat(16_384)],
  ])('locks, re-enters and unlocks a name with %s', async (_label, name) => {
    const redisson = client();
    const other = client();
    const lock = redisson.getLock(name);
    const channel = channelOf(name);

    await redisson.run(async () => {
      const first = await lock.acquire({ leaseTime: 60_000 });
      const second = await lock.acquire({ leaseTime: 30_000 });
      expect(second.threadId).toBe(first.threadId);
      const field = `${redisson.id}:${first.threadId}`;
      expect(await admin().hgetall(name)).toEqual({ [field]: '2' });
      expect(await admin().keys('*')).toEqual([name]);
      const ttl = await admin().pttl(name);
      expect(ttl).toBeGreaterThan(20_000);
      expect(ttl).toBeLessThanOrEqual(30_000);
      expect(await lock.getHoldCount()).toBe(2);
      expect(await lock.isHeldByThread(first.threadId)).toBe(true);
      expect(await other.getLock(name).tryLock({ leaseTime: 1_000 })).toBe(false);

      await second.release();
      expect(await admin().hgetall(name)).toEqual({ [field]: '1' });
      await first.release();
    });

    expect(await admin().exists(name)).toBe(0);
    expect(await lock.isLocked()).toBe(false);
    await admin().publish('fence', 'x'); // once the listener has this, it has what was published before
    await eventually(() => messages.at(-1)?.[0] === 'fence', 10_000, 'the fence message');
    expect(messages).toEqual([[channel, '0'], ['fence', 'x']]);
    // The unlock latch is deleted after the reply; nothing else may be left behind.
    await eventually(async () => (await admin().dbsize()) === 0, 10_000, 'an empty keyspace');
  });

  it('accepts a name of exactly 64 KiB in multi-byte characters and the largest time values', async () => {
    const name = 'é'.repeat(32_768);
    const lock = client().getLock(name);
    expect(await lock.tryLock({ waitTime: MAX_TIME_MS, leaseTime: MAX_TIME_MS, threadId: Number.MAX_SAFE_INTEGER })).toBe(true);
    expect(await lock.remainTimeToLive()).toBeGreaterThan(MAX_TIME_MS - 60_000);
    expect(Object.keys(await admin().hgetall(name))).toEqual([expect.stringMatching(/:9007199254740991$/)]);
    await lock.unlock({ threadId: Number.MAX_SAFE_INTEGER });
    expect(await admin().exists(name)).toBe(0);
  });
});

describe('options objects with a prototype', () => {
  it('ignores inherited option properties rather than obeying them', async () => {
    const redisson = client();
    const holder = client();
    await holder.getLock('hostile').lock({ leaseTime: 30_000 });
    const other = redisson.getLock('hostile');
    // An inherited `waitTime: 0` must not turn lock() into a single attempt that returns without the lock.
    const locking = other.lock(Object.create({ waitTime: 0 }) as never);
    const outcome = await Promise.race([locking.then(() => 'returned'), new Promise((r) => setTimeout(() => r('waiting'), 300))]);
    expect(outcome).toBe('waiting');
    await holder.getLock('hostile').forceUnlock();
    await locking;
    expect(await other.isHeldByCurrentThread()).toBe(true);
    await other.unlock();
  });
});
