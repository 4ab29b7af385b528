import { LockNotHeldError } from '../../lib';
import { delay } from '../helpers/fixture';
import { eventually, subscriberCount } from '../helpers/redis-server';
import { describeInterop } from './helpers/java-tools';
import { useInterop } from './helpers/use-interop';

/** Redisson's score for a permit that never expires. */
const NO_EXPIRY = 922337203685477;
const LEASE = 1_500;
/** Node waiters re-check by themselves every 5 s (PERMIT_RECHECK_MS): under 3 s is a message. */
const WAKE_BOUND = 3_000;

// Redisson's names, written out.
const timeoutsOf = (name: string): string => `{${name}}:timeout`;
const channelOf = (name: string): string => `redisson_sc:{${name}}`;

type Side = 'java' | 'node';
const other = (side: Side): Side => (side === 'java' ? 'node' : 'java');

describeInterop('interop: permit-expirable semaphore (RPermitExpirableSemaphore) across Java and Node', () => {
  const { admin, client, javaExpirableSemaphore } = useInterop();

  /** The permit ZSET as hex ids (Redis holds 16 raw bytes each) with their scores. */
  async function permitsInRedis(name: string): Promise<Array<[string, number]>> {
    const flat = await admin().zrangeBuffer(timeoutsOf(name), 0, -1, 'WITHSCORES');
    const out: Array<[string, number]> = [];
    for (let i = 0; i < flat.length; i += 2) out.push([flat[i]!.toString('hex'), Number(flat[i + 1]!.toString())]);
    return out;
  }

  function sides(name: string) {
    const java = javaExpirableSemaphore(name);
    const node = client().getPermitExpirableSemaphore(name);
    return {
      java,
      node,
      acquire: async (side: Side, leaseMs?: number): Promise<string> =>
        side === 'java' ? java.acquire(leaseMs) : (await node.acquire(leaseMs === undefined ? {} : { leaseTime: leaseMs })).permitId!,
      release: (side: Side, id: string): Promise<unknown> => (side === 'java' ? java.release(id) : node.release(id)),
      tryRelease: (side: Side, id: string): Promise<boolean> => (side === 'java' ? java.tryRelease(id) : node.tryRelease(id)),
      available: (side: Side): Promise<number> => (side === 'java' ? java.availablePermits() : node.availablePermits()),
    };
  }

  it.each(['java', 'node'] as const)('a permit acquired on the %s side is released by its id on the other side', async (acquirer) => {
    const name = `expirable:release:${acquirer}`;
    const s = sides(name);
    expect(acquirer === 'java' ? await s.java.trySetPermits(2) : await s.node.trySetPermits(2)).toBe(true);
    expect(acquirer === 'java' ? await s.node.trySetPermits(5) : await s.java.trySetPermits(5)).toBe(false);

    const id = await s.acquire(acquirer);
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    // Stored as 16 raw bytes that never expire, whoever wrote them.
    expect(await permitsInRedis(name)).toEqual([[id, NO_EXPIRY]]);
    expect(await s.available('java')).toBe(1);
    expect(await s.available('node')).toBe(1);

    await s.release(other(acquirer), id);
    expect(await permitsInRedis(name)).toEqual([]);
    expect(await s.available('java')).toBe(2);
    expect(await s.available('node')).toBe(2);

    // Gone for both sides now.
    expect(await s.tryRelease('java', id)).toBe(false);
    expect(await s.tryRelease('node', id)).toBe(false);
    await expect(s.java.release(id)).rejects.toThrow(new RegExp(`IllegalArgumentException: Permit with id ${id} has already been released or doesn't exist`));
    await expect(s.node.release(id)).rejects.toBeInstanceOf(LockNotHeldError);
    expect(await s.available('node')).toBe(2);
  });

  it.each(['java', 'node'] as const)('a permit leased on the %s side expires for the other side too', async (acquirer) => {
    const name = `expirable:lease:${acquirer}`;
    const s = sides(name);
    expect(await s.java.trySetPermits(1)).toBe(true);
    const before = Date.now();
    const id = await s.acquire(acquirer, LEASE);
    const [[storedId, expiry]] = (await permitsInRedis(name)) as [[string, number]];
    expect(storedId).toBe(id);
    // An absolute expiry in epoch ms on both sides.
    expect(expiry).toBeGreaterThanOrEqual(before + LEASE - 1_000);
    expect(expiry).toBeLessThanOrEqual(Date.now() + LEASE + 1_000);
    expect(await s.available(other(acquirer))).toBe(0);

    // A waiter of the other side gets the permit once the lease ends, not later.
    const startedAt = performance.now();
    const next =
      acquirer === 'java' ? s.node.tryAcquire({ waitTime: 15_000 }).then((h) => h?.permitId ?? null) : s.java.tryAcquire(15_000);
    const nextId = await next;
    const waited = performance.now() - startedAt;
    expect(nextId).toMatch(/^[0-9a-f]{32}$/);
    expect(nextId).not.toBe(id);
    expect(waited).toBeLessThan(LEASE + WAKE_BOUND);
    expect(await permitsInRedis(name)).toEqual([[nextId, NO_EXPIRY]]);
    // The expired permit cannot be released by either side.
    expect(await s.tryRelease('java', id)).toBe(false);
    expect(await s.tryRelease('node', id)).toBe(false);
    await s.release(acquirer, nextId!);
    expect(await s.available('java')).toBe(1);
  });

  it.each(['java', 'node'] as const)('an expired %s lease is reclaimed by the other side\'s count', async (acquirer) => {
    const name = `expirable:reclaim:${acquirer}`;
    const s = sides(name);
    expect(await s.node.trySetPermits(2)).toBe(true);
    await s.acquire(acquirer, 500);
    await s.acquire(acquirer);
    expect(await s.available(other(acquirer))).toBe(0);
    await delay(800);
    expect(await s.available(other(acquirer))).toBe(1);
    expect((await permitsInRedis(name)).map(([, score]) => score)).toEqual([NO_EXPIRY]);
  });

  it.each(['java', 'node'] as const)('a %s release by id wakes a waiter of the other side by message', async (releaser) => {
    const name = `expirable:wake:${releaser}`;
    const s = sides(name);
    expect(await s.java.trySetPermits(1)).toBe(true);
    const id = await s.acquire(releaser);
    let waiting: Promise<string | null>;
    if (releaser === 'java') {
      waiting = s.node.acquire({ waitTime: 20_000 }).then((h) => h.permitId!);
    } else {
      waiting = s.java.tryAcquire(20_000);
    }
    await eventually(async () => (await subscriberCount(admin(), channelOf(name))) === 1, 10_000, 'the waiter subscription');
    await delay(200);

    const releasedAt = performance.now();
    await s.release(releaser, id);
    const got = await waiting;
    expect(performance.now() - releasedAt).toBeLessThan(WAKE_BOUND);
    expect(got).toMatch(/^[0-9a-f]{32}$/);
    expect(await permitsInRedis(name)).toEqual([[got, NO_EXPIRY]]);
    await s.release(other(releaser), got!);
  });
});
