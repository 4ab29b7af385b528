import { randomUUID } from 'node:crypto';
import { execFile } from 'node:child_process';
import { getEventListeners } from 'node:events';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  LockAcquireTimeoutError,
  LockNotHeldError,
  type RedissonClient,
} from '../lib';
import { countAsyncResources } from './helpers/async-resources';
import { delay, useRedis } from './helpers/fixture';
import { commandCounts, commandsBetween, eventually, expectUnsubscribed, subscriberCount } from './helpers/redis-server';

const { admin, client, server } = useRedis();

/** Read-modify-write of a Redis counter with an await in between: loses updates unless excluded. */
async function unsafeIncrement(key: string): Promise<void> {
  const value = Number((await admin().get(key)) ?? 0);
  await delay(1);
  await admin().set(key, value + 1);
}

function expectIdle(redisson: RedissonClient): void {
  expect(redisson.diagnostics()).toEqual({ channels: 0, waiters: 0, leases: 0 });
}

describe('RLock ownership and reentrancy', () => {
  it('re-enters inside redisson.run() and stores one <uuid>:<id> field with the hold count', async () => {
    const redisson = client();
    const lock = redisson.getLock('order:42');
    const counts: number[] = [];
    await redisson.run(async () => {
      await lock.lock();
      counts.push(await lock.getHoldCount());
      await lock.lock();
      counts.push(await lock.getHoldCount());
      const fields = await admin().hgetall('order:42');
      expect(Object.keys(fields)).toHaveLength(1);
      const [field] = Object.keys(fields);
      expect(field).toMatch(new RegExp(`^${redisson.id}:[1-9][0-9]*$`));
      expect(fields[field!]).toBe('2');
      expect(await lock.isHeldByCurrentThread()).toBe(true);
      await lock.unlock();
      counts.push(await lock.getHoldCount());
      await lock.unlock();
      counts.push(await lock.getHoldCount());
    });
    expect(counts).toEqual([1, 2, 1, 0]);
    expect(await admin().exists('order:42')).toBe(0);
    expect(redisson.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expectIdle(redisson);
  });

  it('makes two concurrent tasks outside any scope exclude each other, on one object or two', async () => {
    const redisson = client();
    const shared = redisson.getLock('counter-lock');
    const task = async (lock = shared): Promise<void> => {
      for (let i = 0; i < 25; i++) {
        await lock.lock();
        try {
          await unsafeIncrement('counter');
        } finally {
          await lock.unlock();
        }
      }
    };
    await Promise.all([task(), task(), task(redisson.getLock('counter-lock'))]);
    expect(await admin().get('counter')).toBe('75');
    expectIdle(redisson);
  });

  it('does not re-enter across tasks: a second task waits instead of sharing the hold', async () => {
    const redisson = client();
    const lock = redisson.getLock('no-silent-reentry');
    await lock.lock();
    expect(await lock.tryLock()).toBe(false);
    expect(await redisson.getLock('no-silent-reentry').tryLock({ waitTime: 50 })).toBe(false);
    await lock.unlock();
    expectIdle(redisson);
  });

  it('warns once, clearly, when a bare lock() outside any scope would wait for a hold of the same client', async () => {
    const redisson = client();
    const emitWarning = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      await redisson.getLock('self').lock();
      const again = redisson.getLock('self').lock({ signal: AbortSignal.timeout(200) });
      await expect(again).rejects.toMatchObject({ name: 'TimeoutError' });
      await expect(redisson.getLock('self').lock({ signal: AbortSignal.timeout(50) })).rejects.toBeDefined();
      expect(emitWarning).toHaveBeenCalledTimes(1);
      expect(emitWarning.mock.calls[0]![0]).toMatch(/redisson\.run\(\) or lock\.using\(\)/);
      expect(emitWarning.mock.calls[0]![1]).toEqual({ code: 'IOREDISSON_SELF_WAIT' });
    } finally {
      emitWarning.mockRestore();
    }
    await redisson.getLock('self').unlock();
  });

  it('lets an explicit threadId own, query and release the lock', async () => {
    const redisson = client();
    const lock = redisson.getLock('explicit');
    await lock.lock({ threadId: 7 });
    expect(await admin().hget('explicit', `${redisson.id}:7`)).toBe('1');
    expect(await lock.isHeldByThread(7)).toBe(true);
    expect(await lock.isHeldByThread(8)).toBe(false);
    expect(await lock.getHoldCount({ threadId: 7 })).toBe(1);
    await lock.unlock({ threadId: 7 });
    expect(await lock.isLocked()).toBe(false);
  });

  it('throws LockNotHeldError on a second unlock and on unlock by a non-owner', async () => {
    const redisson = client();
    const lock = redisson.getLock('twice');
    await lock.lock();
    await lock.unlock();
    await expect(lock.unlock()).rejects.toBeInstanceOf(LockNotHeldError);
    await redisson.getLock('twice').lock({ threadId: 1 });
    await expect(lock.unlock({ threadId: 2 })).rejects.toBeInstanceOf(LockNotHeldError);
    expect(await admin().hget('twice', `${redisson.id}:1`)).toBe('1');
  });

  it('reports state: isLocked, remainTimeToLive, forceUnlock', async () => {
    const redisson = client();
    const lock = redisson.getLock('state');
    expect(await lock.isLocked()).toBe(false);
    expect(await lock.remainTimeToLive()).toBe(-2);
    await lock.lock({ leaseTime: 10_000 });
    expect(await lock.isLocked()).toBe(true);
    const ttl = await lock.remainTimeToLive();
    expect(ttl).toBeGreaterThan(5_000);
    expect(ttl).toBeLessThanOrEqual(10_000);
    expect(await lock.forceUnlock()).toBe(true);
    expect(await lock.forceUnlock()).toBe(false);
    expect(await lock.isLocked()).toBe(false);
    expectIdle(redisson);
  });
});

describe('RLock waiting without polling', () => {
  it('wakes a waiter with the unlock message, not its TTL, and sends nothing while it waits', async () => {
    const holder = client();
    const waiter = client();
    const held = holder.getLock('hot');
    await held.lock({ leaseTime: 30_000 });
    let acquiredAt = 0;
    const waiting = waiter.getLock('hot').lock().then(() => {
      acquiredAt = performance.now();
    });
    await eventually(() => waiter.diagnostics().waiters === 1, 5_000, 'waiter to park');

    const before = await commandCounts(admin());
    await delay(500);
    const after = await commandCounts(admin());
    expect(commandsBetween(before, after)).toEqual({});

    const unlockedAt = performance.now();
    await held.unlock();
    await waiting;
    // The lease was 30 s: a wake within 2 s can only come from the unlock message.
    expect(acquiredAt - unlockedAt).toBeLessThan(2_000);
    expect(await waiter.getLock('hot').isHeldByCurrentThread()).toBe(true);
    await waiter.getLock('hot').unlock();
  });

  it('hands the lock to waiters one at a time, each woken by a message', async () => {
    const holder = client();
    const waiters = client();
    const lock = holder.getLock('queue');
    await lock.lock({ leaseTime: 30_000 });
    const order: number[] = [];
    let inside = 0;
    let overlaps = 0;
    const tasks = [1, 2, 3].map((n) =>
      waiters.getLock('queue').using(async () => {
        inside += 1;
        if (inside > 1) overlaps += 1;
        order.push(n);
        await delay(5);
        inside -= 1;
      }),
    );
    await eventually(() => waiters.diagnostics().waiters === 3, 5_000, 'three parked waiters');
    expect(await subscriberCount(admin(), 'redisson_lock__channel:{queue}')).toBe(1);
    const start = performance.now();
    await lock.unlock();
    await Promise.all(tasks);
    expect(performance.now() - start).toBeLessThan(5_000);
    expect(overlaps).toBe(0);
    expect(order).toEqual([1, 2, 3]); // one client's waiters are served in the order they parked
    await expectUnsubscribed(admin(), 'redisson_lock__channel:{queue}');
    expectIdle(waiters);
  });

  it('hands over within one client with no wasted attempt: a release message is acted on once', async () => {
    const redisson = client();
    await redisson.getLock('relay').using(() => undefined); // loads the scripts: no NOSCRIPT below
    const holder = await redisson.getLock('relay').acquire({ leaseTime: 30_000 });
    const tasks = [1, 2, 3, 4].map(() => redisson.getLock('relay').using(() => delay(5)));
    await eventually(() => redisson.diagnostics().waiters === 4, 5_000, 'four parked waiters');
    const before = await commandCounts(admin());
    await holder.release();
    await Promise.all(tasks);
    // One unlock by the holder, then one acquire and one unlock per waiter. Each release hands the
    // lock to the next waiter as it is sent; were its message acted on too, a woken waiter would
    // find the lock taken and try in vain.
    expect(commandsBetween(before, await commandCounts(admin())).evalsha).toBe(9);
    await expectUnsubscribed(admin(), 'redisson_lock__channel:{relay}');
    expectIdle(redisson);
  });

  it('loses no wake-up while channels are subscribed and dropped again under churn', async () => {
    // Fifty tasks over twenty locks: channels come and go all the time, and a release is often
    // delivered from its own reply. A wake-up lost there would leave the waiters of a free lock
    // parked until their TTL bound (30 s).
    const redisson = client();
    let left = 3_000;
    let longest = 0;
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        while (left-- > 0) {
          const started = performance.now();
          const handle = await redisson.getLock(`churn:${Math.floor(Math.random() * 20)}`).acquire({ leaseTime: 30_000 });
          longest = Math.max(longest, performance.now() - started);
          await handle.release();
        }
      }),
    );
    expect(longest).toBeLessThan(10_000);
    await eventually(async () => (await admin().pubsub('CHANNELS', 'redisson_lock__channel:{churn:*}')).length === 0, 5_000, 'no channel left subscribed');
    expect(await admin().keys('churn:*')).toEqual([]);
    expectIdle(redisson);
  }, 30_000);

  it('keeps subscriptions made while the subscriber connection is still connecting', async () => {
    // Waiters that subscribe during the subscriber's handshake (ioredis#2037 made it reconnect and
    // drop them) must still be woken by the release messages, long before their 30 s TTL bound.
    const holder = client();
    const held = await Promise.all(
      Array.from({ length: 30 }, (_, i) => holder.getLock(`early:${i}`).acquire({ leaseTime: 30_000 })),
    );
    const redisson = client();
    const waits: Promise<void>[] = [];
    for (let i = 0; i < 30; i++) {
      waits.push(redisson.getLock(`early:${i}`).using(() => undefined));
      await new Promise((resolve) => setImmediate(resolve));
    }
    await eventually(() => redisson.diagnostics().waiters === 30, 5_000, 'thirty parked waiters');
    const start = performance.now();
    await Promise.all(held.map((handle) => handle.release()));
    await Promise.all(waits);
    expect(performance.now() - start).toBeLessThan(10_000);
    await eventually(async () => (await admin().pubsub('CHANNELS', 'redisson_lock__channel:{early:*}')).length === 0, 5_000, 'no channel left subscribed');
    expect(await admin().keys('early:*')).toEqual([]);
    expectIdle(redisson);
  }, 30_000);

  it('serves contending tasks of one process in turn: a newcomer queues behind local waiters', async () => {
    const redisson = client();
    const counts = [0, 0, 0, 0];
    let running = true;
    const tasks = counts.map(async (_, i) => {
      while (running) {
        await redisson.getLock('turns').using(async () => {
          counts[i]! += 1;
          await Promise.resolve();
        });
      }
    });
    await eventually(() => Math.min(...counts) >= 50, 20_000, 'every task to get the lock 50 times');
    running = false;
    await Promise.all(tasks);
    // Without queueing, the releasing task's next attempt always beats the woken waiter's.
    expect(Math.min(...counts) / Math.max(...counts)).toBeGreaterThan(0.5);
    expectIdle(redisson);
  });

  it('gets a lock whose explicit lease expires, with no message at all', async () => {
    const holder = client();
    const waiter = client();
    await holder.getLock('lease').lock({ leaseTime: 200 });
    const start = performance.now();
    const handle = await waiter.getLock('lease').acquire({ waitTime: 10_000 });
    const waited = performance.now() - start;
    expect(waited).toBeGreaterThanOrEqual(100);
    expect(waited).toBeLessThan(5_000);
    await handle.release();
    await expect(holder.getLock('lease').unlock()).rejects.toBeInstanceOf(LockNotHeldError);
  });
});

describe('RLock uncontended cycle cost', () => {
  // Counts, not times (the speed goals are npm run bench's): what one lock + unlock sends and makes.
  // Deadlock detection and the owner record cost an uncontended cycle nothing: no command, timer or promise.
  it.each([
    ['off', {}],
    ['with ownerInfo and deadlockDetection', { ownerInfo: { service: 'cost' }, deadlockDetection: { after: 1_000 } }],
  ] as const)('sends two script calls and one latch DEL per cycle, creates one lease timer and a bounded number of promises (options %s)', async (_, options) => {
    const lock = client(options).getLock(`cost:${randomUUID()}`);
    for (let i = 0; i < 20; i++) await (await lock.acquire()).release(); // scripts cached, replica count read
    const cycles = 200;
    const before = await commandCounts(admin());
    const created = countAsyncResources();
    for (let i = 0; i < cycles; i++) await (await lock.acquire()).release();
    const made = created.stop();
    const sent = commandsBetween(before, await commandCounts(admin()), ['info', 'keys']);
    expect(sent.evalsha).toBe(2 * cycles);
    expect(sent.wait).toBeUndefined(); // no replica, so no WAIT
    expect(sent.hset).toBeUndefined(); // the owner record, if any, was written before (and lasts 2 leases)
    // The unlock script deletes the lock, and its latch is deleted right behind its reply.
    expect(sent.del).toBe(2 * cycles);
    expect(await admin().keys('redisson_unlock_latch:*')).toEqual([]);
    expect(made.Timeout).toBe(cycles); // each hold's lease timer
    // About 16 a cycle (the lock's own and ioredis'); a per-write detour such as the replica check
    // that once ran even with no replica shows up here (it made 36).
    expect((made.PROMISE ?? 0) / cycles).toBeLessThanOrEqual(20);
  });
});

describe('RLock parked waiter cost', () => {
  // What a waiter makes and keeps while it waits, as thousands may wait in one process (npm run
  // bench's many-waiters weighs a whole waiting process): counted, and weighed from heap snapshots,
  // in a child process (fixture) whose heap is the library's alone.
  const waiters = 1_000;
  let found: { newcomer: Record<string, number>; rewoken: Record<string, number>; spread: Record<string, number> };
  beforeAll(async () => {
    const fixture = join(__dirname, 'fixtures', 'parked-waiters.mjs');
    const { stdout } = await promisify(execFile)(process.execPath, [fixture, server().url, String(waiters)], {
      timeout: 50_000,
    });
    found = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as typeof found;
  });

  it('a newcomer parks behind this client’s waiters with no timer of its own and one promise', () => {
    expect(found.newcomer.parked).toBe(2 * waiters); // weighed, then counted
    // The client's one wait timer may be set again, for an earlier end; no waiter sets one of its own.
    expect(found.newcomer.timersCreated).toBeLessThan(0.01);
    expect(found.newcomer.liveTimers).toBe(0);
    expect(found.newcomer.promisesCreated).toBe(1); // the one it returns
    expect(found.newcomer.livePromises).toBe(1);
  });

  it('a parked newcomer keeps a few objects', () => {
    // Its acquisition, its lock attempts (which are also the acquisition's request), the lock
    // object's engine, and the promise it returns with one of that promise's resolving functions
    // (a failure resolves it with a rejected promise; 6 objects when both were kept). The lock
    // object itself is not kept, nor an object for its share of the channel's subscription, nor
    // one for its place in the channel's queue.
    expect(found.newcomer.liveObjects).toBeLessThanOrEqual(5.1);
    // Those objects' bytes, in Node 20's layout (541; 724 with both resolving functions, its queue
    // place in a Set, fields kept for trouble, state and the attempt's reporter, two heap numbers,
    // and the lock attempts keeping the last TTL read and the give-up's clean-up).
    expect(found.newcomer.liveBytes).toBeLessThanOrEqual(556);
    // The two largest, by their fields: the acquisition's 14 (22 before: 200 B), the lock attempts'
    // 8 (10 before: 104 B), each 8 B after a 24 B header.
    expect(found.newcomer.acquisitionBytes).toBeLessThanOrEqual(24 + 14 * 8);
    expect(found.newcomer.lockAttemptsBytes).toBeLessThanOrEqual(24 + 8 * 8);
    // A number field holding a fraction keeps a heap number: its start and its turn's due time in
    // the client's timer queue are kept in whole ms (2 when neither was).
    expect(found.newcomer.heapNumbers).toBeLessThanOrEqual(0.01);
  });

  it('waiters started together over many locks keep those objects, and a share of their channels', () => {
    // As npm run bench's many-waiters starts them: each attempts, subscribes and parks, 10 a lock.
    expect(found.spread.parked).toBe(waiters);
    // Its promise alone; a channel keeps none once its SUBSCRIBE is answered (1.2 when it kept two).
    expect(found.spread.livePromises).toBeLessThanOrEqual(1.01);
    // Five objects, and six a channel (6.9 when a channel kept nine, and a waiter six).
    expect(found.spread.liveObjects).toBeLessThanOrEqual(5.7);
    // No heap number, though the newcomers before them set timers: a fractional due time once in a
    // field of its class would box that field in every acquisition (1.1 when due times had fractions).
    expect(found.spread.heapNumbers).toBeLessThanOrEqual(0.01);
  });

  it('a waiter woken for nothing parks again without a timer of its own', () => {
    expect(found.rewoken.timersCreated).toBeLessThan(0.1);
  });
});

describe('RLock time-outs, aborts and leftovers', () => {
  it('tryLock returns false when its wait runs out; acquire throws LockAcquireTimeoutError', async () => {
    const holder = client();
    const waiter = client();
    await holder.getLock('busy').lock({ leaseTime: 30_000 });
    expect(await waiter.getLock('busy').tryLock()).toBe(false);
    expect(await waiter.getLock('busy').tryLock({ waitTime: 100 })).toBe(false);
    expect(await waiter.getLock('busy').tryAcquire({ waitTime: 50 })).toBeNull();
    const error = await waiter.getLock('busy').acquire({ waitTime: 100 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockAcquireTimeoutError);
    expect(error).toMatchObject({ code: 'ERR_LOCK_ACQUIRE_TIMEOUT', lockName: 'busy', waitTime: 100 });
    expectIdle(waiter);
    await expectUnsubscribed(admin(), 'redisson_lock__channel:{busy}');
  });

  it('rejects with the signal reason when aborted while waiting, and leaves nothing behind', async () => {
    const holder = client();
    const waiter = client();
    await holder.getLock('abort').lock({ leaseTime: 30_000 });
    const controller = new AbortController();
    const reason = new Error('caller gave up');
    const waiting = waiter.getLock('abort').lock({ signal: controller.signal });
    await eventually(() => waiter.diagnostics().waiters === 1, 5_000, 'waiter to park');
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    expectIdle(waiter);
    await expectUnsubscribed(admin(), 'redisson_lock__channel:{abort}');
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(await admin().hlen('abort')).toBe(1);
  });

  it('rejects at once, sending nothing, when the signal is already aborted', async () => {
    const redisson = client();
    const before = await commandCounts(admin());
    const reason = new Error('already');
    await expect(redisson.getLock('pre').lock({ signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(commandsBetween(before, await commandCounts(admin()))).toEqual({});
  });
});

describe('Redisson wire compatibility', () => {
  it('is blocked by a lock written by hand in Redisson format under another client id', async () => {
    const redisson = client();
    const javaOwner = `${randomUUID()}:57`;
    await admin().hset('shared', javaOwner, 1);
    await admin().pexpire('shared', 30_000);
    expect(await redisson.getLock('shared').tryLock()).toBe(false);
    expect(await redisson.getLock('shared').tryLock({ waitTime: 100 })).toBe(false);
  });

  it('wakes a waiter on a 0 published by hand, and publishes 0 on its own unlock', async () => {
    const redisson = client();
    await admin().hset('java-held', `${randomUUID()}:1`, 1);
    await admin().pexpire('java-held', 30_000);
    const start = performance.now();
    const waiting = redisson.getLock('java-held').acquire();
    await eventually(() => redisson.diagnostics().waiters === 1, 5_000, 'waiter to park');
    await admin().del('java-held');
    await admin().publish('redisson_lock__channel:{java-held}', '0');
    const handle = await waiting;
    expect(performance.now() - start).toBeLessThan(10_000);

    const listener = admin().duplicate();
    const messages: [string, string][] = [];
    listener.on('message', (channel: string, message: string) => messages.push([channel, message]));
    await listener.subscribe('redisson_lock__channel:{java-held}');
    await handle.release();
    await eventually(() => messages.length === 1, 5_000, 'unlock message');
    expect(messages).toEqual([['redisson_lock__channel:{java-held}', '0']]);
    listener.disconnect();
  });

  it('uses the channel of a name that already carries a hash tag', async () => {
    const redisson = client();
    const listener = admin().duplicate();
    const channels: string[] = [];
    listener.on('message', (channel: string) => channels.push(channel));
    await listener.subscribe('redisson_lock__channel:{t1}:job');
    const lock = redisson.getLock('{t1}:job');
    await lock.lock();
    await lock.unlock();
    await eventually(() => channels.length === 1, 5_000, 'unlock message');
    expect(channels).toEqual(['redisson_lock__channel:{t1}:job']);
    listener.disconnect();
  });

  it('deletes the unlock latch after a successful unlock', async () => {
    const redisson = client();
    const lock = redisson.getLock('latched');
    await lock.lock();
    await lock.unlock();
    await eventually(async () => (await admin().keys('redisson_unlock_latch:*')).length === 0, 5_000, 'latch deletion');
    expect(await admin().dbsize()).toBe(0);
  });

  it('accounts for an ioredis keyPrefix on both the keys and the channel', async () => {
    const prefixed = client(undefined, { keyPrefix: 'app:' });
    const waiting = client(undefined, { keyPrefix: 'app:' });
    const plain = client();
    const holder = prefixed.getLock('job');
    await holder.lock({ leaseTime: 30_000 });
    expect(await admin().exists('app:job')).toBe(1);
    const start = performance.now();
    const acquired = waiting.getLock('job').acquire();
    await eventually(() => waiting.diagnostics().waiters === 1, 5_000, 'waiter to park');
    expect(await subscriberCount(admin(), 'app:redisson_lock__channel:{job}')).toBe(1);
    await holder.unlock();
    await (await acquired).release();
    expect(performance.now() - start).toBeLessThan(10_000);
    expect(await plain.getLock('job').isLocked()).toBe(false);
    await eventually(async () => (await admin().dbsize()) === 0, 5_000, 'the unlock latches to go');
  });
});

describe('re-entry while other owners of the same client wait', () => {
  const { client: makeClient } = useRedis();

  it('re-enters at once instead of queueing behind local waiters that wait for the holder', async () => {
    const redisson = makeClient();
    const lock = redisson.getLock('reentry:queue');
    let reenteredIn = Infinity;
    const holder = redisson.run(async () => {
      await lock.lock();
      // Another owner of this client parks on the lock meanwhile.
      await eventually(() => redisson.diagnostics().waiters === 1, 10_000, 'a local waiter');
      const start = performance.now();
      await lock.lock(); // must not wait a turn behind that waiter: it waits for us
      reenteredIn = performance.now() - start;
      expect(await lock.getHoldCount()).toBe(2);
      await lock.unlock();
      await lock.unlock();
    });
    const other = redisson.run(async () => {
      await delay(50);
      await lock.lock();
      await lock.unlock();
    });
    await Promise.all([holder, other]);
    // Far below the 30 s turn bound a queued re-entry would have waited.
    expect(reenteredIn).toBeLessThan(5_000);
  });
});
