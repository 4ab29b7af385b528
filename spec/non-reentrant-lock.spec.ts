import { LockReentryError, RNonReentrantLock, RLock, type RedissonClient } from '../lib';
import { acquireNonReentrantLock } from '../lib/kinds/scripts/non-reentrant-lock';
import { delay, useRedis } from './helpers/fixture';
import { commandCounts, commandsBetween, eventually } from './helpers/redis-server';
import { plainRunner } from './helpers/lock-scripts';

const { admin, client } = useRedis();

/** Rejects with LockReentryError within `ms` (far less than any wait it could get stuck in). */
async function expectReentryRefused(call: Promise<unknown>, ms = 5_000): Promise<LockReentryError> {
  const startedAt = performance.now();
  const error = await call.then(
    () => {
      throw new Error('the re-acquire succeeded');
    },
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(LockReentryError);
  expect(performance.now() - startedAt).toBeLessThan(ms);
  return error as LockReentryError;
}

function expectIdle(redisson: RedissonClient): void {
  expect(redisson.diagnostics()).toEqual({ channels: 0, waiters: 0, leases: 0 });
}

describe('NonReentrantLock re-acquire by the holder', () => {
  it('rejects at once with LockReentryError within an owner scope, on every acquire method', async () => {
    const redisson = client();
    const lock = redisson.getNonReentrantLock('nr:scope');
    expect(lock).toBeInstanceOf(RNonReentrantLock);
    expect(lock).toBeInstanceOf(RLock);
    await redisson.run(async () => {
      await lock.lock();
      // Each of these would wait forever (or 60 s) for itself, or re-enter, if it were not refused.
      const error = await expectReentryRefused(lock.lock());
      expect(error.code).toBe('ERR_LOCK_REENTRY');
      expect(error.lockName).toBe('nr:scope');
      expect(error.owner).toMatch(new RegExp(`^${redisson.id}:[1-9][0-9]*$`));
      expect(error.message).toMatch(/non-reentrant/);
      await expectReentryRefused(lock.tryLock());
      await expectReentryRefused(lock.tryLock({ waitTime: 60_000 }));
      await expectReentryRefused(lock.acquire());
      await expectReentryRefused(lock.tryAcquire({ waitTime: 60_000 }));
      await expectReentryRefused(lock.using(() => 'never runs'));
      await expectReentryRefused(redisson.getNonReentrantLock('nr:scope').lock()); // another object, same owner
      // The refusals left the one hold as it was.
      expect(await lock.getHoldCount()).toBe(1);
      expect(await admin().hvals('nr:scope')).toEqual(['1']);
      await lock.unlock();
    });
    expect(await lock.isLocked()).toBe(false);
    expectIdle(redisson);
  });

  it('rejects at once for an explicit threadId, sending one script call and nothing to undo', async () => {
    const redisson = client();
    const lock = redisson.getNonReentrantLock('nr:thread');
    await lock.lock({ threadId: 7 });
    const before = await commandCounts(admin());
    await expectReentryRefused(lock.tryLock({ threadId: 7, waitTime: 60_000 }));
    // One acquire script (its own reads count too: exists, hget) and no trim sent after it.
    const sent = commandsBetween(before, await commandCounts(admin()));
    expect(sent).toEqual({ evalsha: 1, exists: 1, hget: 1 });
    expect(await lock.getHoldCount({ threadId: 7 })).toBe(1);
    // Another thread id of the same client is another owner: it waits, as for any lock.
    expect(await lock.tryLock({ threadId: 8, waitTime: 100 })).toBe(false);
    await lock.unlock({ threadId: 7 });
    expect(await lock.tryLock({ threadId: 8 })).toBe(true);
    await lock.unlock({ threadId: 8 });
    expectIdle(redisson);
  });

  it('nested using() of the same lock is refused, and the outer hold is kept and released', async () => {
    const redisson = client();
    const lock = redisson.getNonReentrantLock('nr:using');
    const result = await lock.using(async () => {
      await expectReentryRefused(lock.using(() => 'inner'));
      return 'outer';
    });
    expect(result).toBe('outer');
    expect(await lock.isLocked()).toBe(false);
  });
});

describe('NonReentrantLock and other owners', () => {
  it('another client waits and is woken by the release message', async () => {
    const holder = client();
    const waiter = client();
    const held = await holder.getNonReentrantLock('nr:other').acquire({ leaseTime: 30_000 });
    const waiting = waiter.getNonReentrantLock('nr:other').acquire({ waitTime: 25_000 });
    await eventually(() => waiter.diagnostics().waiters === 1, 10_000, 'a parked waiter');
    await delay(100);
    const releasedAt = performance.now();
    await held.release();
    const handle = await waiting;
    expect(performance.now() - releasedAt).toBeLessThan(10_000); // far below the 30 s lease
    await handle.release();
  });

  it('another owner scope of the same client waits, and gets the lock after release', async () => {
    const redisson = client();
    const lock = redisson.getNonReentrantLock('nr:scopes');
    const order: string[] = [];
    let releaseFirst!: () => void;
    const firstHolds = new Promise<void>((resolve) => (releaseFirst = resolve));
    const first = redisson.run(() =>
      lock.using(async () => {
        order.push('first in');
        await firstHolds;
        order.push('first out');
      }),
    );
    await eventually(() => order.length === 1, 5_000, 'the first holder');
    const second = redisson.run(() => lock.using(() => void order.push('second in'), { waitTime: 20_000 }));
    await delay(200);
    expect(order).toEqual(['first in']);
    releaseFirst();
    await Promise.all([first, second]);
    expect(order).toEqual(['first in', 'first out', 'second in']);
  });
});

describe('NonReentrantLock acquire script', () => {
  it('takes a free lock, refuses the holder with an error reply, and counts a re-send once', async () => {
    const runner = plainRunner(admin());
    const owner = 'client-a:1';
    expect(await acquireNonReentrantLock(runner, 'nr:script', owner, 10_000, 0)).toBeNull();
    // The same call again (believing no holds), as a re-send after a lost reply would land: success, counted once.
    expect(await acquireNonReentrantLock(runner, 'nr:script', owner, 10_000, 0)).toBeNull();
    expect(await admin().hget('nr:script', owner)).toBe('1');
    // A real second acquire (believing its one hold) is refused.
    expect(await acquireNonReentrantLock(runner, 'nr:script', owner, 10_000, 1)).toBe('held');
    expect(await admin().hget('nr:script', owner)).toBe('1');
    const ttl = await acquireNonReentrantLock(runner, 'nr:script', 'client-b:1', 10_000, 0);
    expect(ttl).toBeGreaterThan(5_000);
    // Redisson's text: its Java clients see the same error reply.
    await expect(admin().eval("return redis.error_reply('NON_REENTRANT_REACQUIRE')", 0)).rejects.toThrow('NON_REENTRANT_REACQUIRE');
  });
});
