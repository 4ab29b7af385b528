import { InvalidArgumentError, LockLostError, LockNotHeldError, RFasterMultiLock } from '../lib';
import { valueField } from '../lib/kinds/faster-multi-lock';
import { delay, useRedis, within } from './helpers/fixture';
import { commandCounts, commandsBetween, eventually } from './helpers/redis-server';

const { admin, client } = useRedis();

/**
 * Fields Java Redisson 4.7 stores for these values (`Hash.hash128toBase64` of `Kryo5Codec` bytes),
 * printed by Redisson itself: Strings (raw ASCII, UTF-8 with a length, 3-byte surrogates, long
 * strings over several 32-byte packets), Integers and Longs at the edges of each varint length.
 */
const JAVA_FIELDS: Array<[string | number | bigint, string]> = [
  ['a', 'Jon6GCcO+0QSJkhre5wXYA'],
  ['ab', 'iFSOY3KcP2BLEBRRjSOm8w'],
  ['Jack_001', 'DScHoUUqdQJ9J7Ux220rcQ'],
  ['', '8kZ0F42HzoQfW3jDxQ6f4g'],
  ['é', 'TfKmvqzzRix6DTrWfCmgqA'],
  ['aé', 'QUeEhFBanh0pdAF6veAe8g'],
  ['日本語', 'vUBKyryx/0Di4fMPuWRWMA'],
  ['😀', 'x8RNEAwQ8KZSMhraJs6dXA'],
  ['x'.repeat(32), '0UUk8uVNEOXl9hsMj/fNEQ'],
  ['x'.repeat(33), 'eJfv05+bxLxhUVWN6o5g5Q'],
  ['y'.repeat(100), 'CwTHIAanfE3EgU+LKcZ0jg'],
  ['z'.repeat(5000), 'dzsURpoZzIJhlYpry4g5uw'],
  ['\u0000a', 'VZiuktpksv7fmW2XobsGow'],
  [0, 'AXJOiXOkq0l3g2Yp0s2hBA'],
  [1, 'ws3CQ1oEZ1gJ/BZKqokY3A'],
  [-1, 'qsKacN1I9GWtvTr65GdF+A'],
  [63, 'ARCDBaHAqUlBT47FuVHp7Q'],
  [64, 'HgqxZhmAdXEbJvdU2IO9Jg'],
  [-65, 'n4jwlFEY9U3h0zlDvWFEpg'],
  [100000, 'BpL1gUPJ1Kf+ElxJAVDb+g'],
  [2147483647, 'aSEd1BBoUDLIZrKOsmDKIw'],
  [-2147483648, 'R1kKuDeBmc0eqIAvhdu5Tw'],
  [0n, 'mrRdTCh4+gAcPKYY3tDnzQ'],
  [5n, 'IMGxE6/yprGpC9xW/VX2/Q'],
  [-5n, 'Icl6z0QUFcuJssdTEgGdPA'],
  [1234567890123n, 'JBs2wwx3RbAJXtL+JEfGLA'],
  [9223372036854775807n, 'oHmWFzLkUeNAtvvz0oDfqw'],
  [-9223372036854775808n, '8wAGzfg3roSo3NdLNkzw7w'],
  [72057594037927935n, 'DIoSxYDi1UE/mfCUzNZXFw'],
  [72057594037927936n, 'UAI8dMh++kjrW0khVXdafQ'],
];

describe('RFasterMultiLock (getMultiLock(group, values))', () => {
  /** A value as a test title shows it: JSON (a NUL escaped, a long string cut), bigints with their `n`. */
  const shown = (value: string | number | bigint): string =>
    typeof value === 'bigint'
      ? `${value}n`
      : JSON.stringify(
          typeof value === 'string' && value.length > 12 ? `${value.slice(0, 3)}… (${value.length} chars)` : value,
        );
  it.each(JAVA_FIELDS.map(([value, field]) => [shown(value), value, field] as const))(
    'stores %s under the field Java Redisson computes',
    (_shown, value, field) => {
      expect(valueField(value)).toBe(field);
    },
  );

  it("stores Redisson's format: per value its owner, the owner's expiry and hold count; the group expires with the lease", async () => {
    const redisson = client();
    const lock = redisson.getMultiLock('class_100', ['Jack_001', 'Mary_002']);
    expect(lock).toBeInstanceOf(RFasterMultiLock);
    const before = Date.now();
    await lock.lock({ threadId: 1 });
    const owner = `${redisson.id}:1`;
    const jack = valueField('Jack_001');
    const mary = valueField('Mary_002');
    const hash = await admin().hgetall('class_100');
    expect(Object.keys(hash).sort()).toEqual(
      [
        jack,
        mary,
        `${jack}:${owner}:expire_time`,
        `${jack}:${owner}:lock_count`,
        `${mary}:${owner}:expire_time`,
        `${mary}:${owner}:lock_count`,
      ].sort(),
    );
    expect(hash[jack]).toBe(owner);
    expect(hash[`${mary}:${owner}:lock_count`]).toBe('1');
    const expiry = Number(hash[`${jack}:${owner}:expire_time`]);
    expect(expiry).toBeGreaterThanOrEqual(before + 30_000);
    expect(expiry).toBeLessThanOrEqual(Date.now() + 30_000);
    expect(await admin().pttl('class_100')).toBeGreaterThan(25_000);
    await lock.unlock({ threadId: 1 });
    expect(await admin().exists('class_100')).toBe(0);
  });

  it('is all-or-nothing: a set with one taken value takes none, a disjoint set of the group is free', async () => {
    const redisson = client();
    await redisson.getMultiLock('g', ['a', 'b']).lock({ threadId: 1 });
    expect(await redisson.getMultiLock('g', ['b', 'c']).tryLock({ threadId: 2 })).toBe(false);
    expect(await admin().hexists('g', valueField('c'))).toBe(0);
    expect(await redisson.getMultiLock('g', ['c', 'd']).tryLock({ threadId: 2 })).toBe(true);
    expect(await redisson.getMultiLock('g', ['b']).isLocked()).toBe(true);
    expect(await redisson.getMultiLock('g', ['e', 'f']).isLocked()).toBe(false);
  });

  it('re-enters: holds count per value, the last release frees every value', async () => {
    const lock = client().getMultiLock('g', ['a', 1, 2n]);
    await lock.lock({ threadId: 3 });
    await lock.lock({ threadId: 3 });
    expect(await lock.getHoldCount({ threadId: 3 })).toBe(2);
    await lock.unlock({ threadId: 3 });
    expect(await lock.isHeldByThread(3)).toBe(true);
    await lock.unlock({ threadId: 3 });
    expect(await lock.isLocked()).toBe(false);
    expect(await admin().exists('g')).toBe(0);
  });

  it('releases nothing when the owner lacks one value of the set', async () => {
    const redisson = client();
    await redisson.getMultiLock('g', ['a']).lock({ threadId: 4 });
    await expect(redisson.getMultiLock('g', ['a', 'b']).unlock({ threadId: 4 })).rejects.toBeInstanceOf(
      LockNotHeldError,
    );
    expect(await redisson.getMultiLock('g', ['a']).isHeldByThread(4)).toBe(true);
  });

  it('wakes a waiter by message when a release frees a value it wants', async () => {
    const redisson = client();
    const holder = await redisson.getMultiLock('g', ['a', 'b']).acquire();
    const other = client();
    const waiting = other.getMultiLock('g', ['b', 'c']).acquire({ waitTime: 20_000 });
    await eventually(
      async () => (await admin().pubsub('NUMSUB', 'redisson_lock__channel:{g}'))[1] === 1,
      5_000,
      'the waiter subscribed',
    );
    const before = await commandCounts(admin());
    const releasedAt = Date.now();
    await holder.release();
    const handle = await within(waiting, 5_000, 'the waiter acquired');
    // Woken by the message, long before the holder's 30 s lease would have ended.
    expect(Date.now() - releasedAt).toBeLessThan(3_000);
    expect(commandsBetween(before, await commandCounts(admin())).publish ?? 0).toBeGreaterThanOrEqual(1);
    await handle.release();
  });

  it("renews every value's expiry while held (watchdog)", async () => {
    const redisson = client({ lockWatchdogTimeout: 1_000 });
    const handle = await redisson.getMultiLock('g', ['a', 'b', 'c']).acquire({ threadId: 5 });
    const owner = `${redisson.id}:5`;
    const expiries = async () =>
      Promise.all(
        ['a', 'b', 'c'].map(async (v) => Number(await admin().hget('g', `${valueField(v)}:${owner}:expire_time`))),
      );
    const first = await expiries();
    await delay(2_500);
    const later = await expiries();
    later.forEach((expiry, i) => expect(expiry).toBeGreaterThan(first[i]! + 1_000));
    expect(handle.signal.aborted).toBe(false);
    expect(await client().getMultiLock('g', ['c']).tryLock()).toBe(false);
    await handle.release();
  });

  it('lets another owner in once a holder’s explicit lease passed, though its fields remain', async () => {
    const redisson = client();
    await redisson.getMultiLock('g', ['a', 'b']).lock({ threadId: 1, leaseTime: 300 });
    await delay(400);
    expect(await redisson.getMultiLock('g', ['b', 'c']).tryLock({ threadId: 2 })).toBe(true);
  });

  it("starts counting again over a hold that ran out, and drops the previous holder's fields", async () => {
    const redisson = client();
    await redisson.getMultiLock('g', ['a']).lock({ threadId: 1, leaseTime: 200 });
    await redisson.getMultiLock('g', ['b']).lock({ threadId: 2, leaseTime: 200 });
    await delay(300);
    const lock = redisson.getMultiLock('g', ['a', 'b']);
    await lock.lock({ threadId: 1 });
    expect(await lock.getHoldCount({ threadId: 1 })).toBe(1);
    expect(Object.keys(await admin().hgetall('g')).filter((field) => field.includes(`${redisson.id}:2`))).toEqual([]);
    await lock.unlock({ threadId: 1 });
    expect(await admin().exists('g')).toBe(0);
  });

  it('keeps unscoped holders of different value sets of one group apart', async () => {
    const redisson = client();
    await redisson.getMultiLock('g', ['a']).lock();
    await redisson.getMultiLock('g', ['b']).lock();
    await redisson.getMultiLock('g', ['a']).unlock();
    await redisson.getMultiLock('g', ['b']).unlock();
    expect(await admin().exists('g')).toBe(0);
  });

  it('forceUnlock frees the values whoever holds them; the holder learns it lost them', async () => {
    const redisson = client({ lockWatchdogTimeout: 600 });
    const handle = await redisson.getMultiLock('g', ['a', 'b']).acquire();
    const kept = await redisson.getMultiLock('g', ['c']).acquire();
    expect(await client().getMultiLock('g', ['b', 'a']).forceUnlock()).toBe(true);
    expect(await client().getMultiLock('g', ['a', 'b']).isLocked()).toBe(false);
    await eventually(() => handle.signal.aborted, 5_000, 'the holder lost its values');
    expect(handle.signal.reason).toBeInstanceOf(LockLostError);
    expect(kept.signal.aborted).toBe(false);
    await kept.release();
  });

  it.each<[string, unknown]>([
    ['no values', []],
    ['a value twice', ['a', 'b', 'a']],
    ['a fraction', [1.5]],
    ['a number beyond int32', [2 ** 31]],
    ['a bigint beyond int64', [2n ** 63n]],
    ['an object', [{}]],
    ['null', [null]],
    ['a boolean', [true]],
    ['not an array', 'ab'],
  ])('rejects %s with InvalidArgumentError before Redis', async (_what, values) => {
    const before = await commandCounts(admin());
    expect(() => client().getMultiLock('g', values as string[])).toThrow(InvalidArgumentError);
    const delta = commandsBetween(before, await commandCounts(admin()));
    expect((delta.evalsha ?? 0) + (delta.eval ?? 0) + (delta.hset ?? 0)).toBe(0);
  });

  it('takes 5 and 5n as different values (Integer and Long)', async () => {
    const redisson = client();
    await redisson.getMultiLock('g', [5]).lock({ threadId: 1 });
    expect(await redisson.getMultiLock('g', [5n]).tryLock({ threadId: 2 })).toBe(true);
  });
});
