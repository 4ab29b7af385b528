import crypto, { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { RedissonClient } from '../lib';
import { LOCK_KINDS, SEMAPHORE_KINDS } from './contract/kinds';
import { lockOf } from './contract/lock-contract';
import { countAsyncResources } from './helpers/async-resources';
import { useRedis } from './helpers/fixture';
import { commandCounts, commandsBetween, eventually } from './helpers/redis-server';

/*
 * What each kind's cycles cost the client, counted (the speed goals are npm run bench's): the
 * commands it sends, the timers and promises it makes. Every lock kind of the registry, and every
 * semaphore kind, so that a new kind, or a detour added to the shared path, shows up here.
 */

const { server, client, admin } = useRedis();

/** A client on a connection of its own, which the test counts; shut down after `fn`. */
async function withClient(fn: (redisson: RedissonClient, connection: Redis) => Promise<void>): Promise<void> {
  const connection = server().connect();
  const redisson = new RedissonClient(connection);
  try {
    await fn(redisson, connection);
  } finally {
    await redisson.shutdown();
    connection.disconnect();
  }
}

const CYCLES = 100;

/** Counts, by command name, what `connection` sends from now on (a spy: real Redis answers). */
function countSent(connection: Redis): { stop(): Record<string, number> } {
  const spy = jest.spyOn(connection, 'sendCommand');
  return {
    stop() {
      const sent: Record<string, number> = {};
      for (const [command] of spy.mock.calls) sent[command.name] = (sent[command.name] ?? 0) + 1;
      spy.mockRestore();
      return sent;
    },
  };
}

/** Runs `cycle` CYCLES times (after a warm-up) and returns what it sent and made, per cycle. */
async function costOf(
  connection: Redis,
  cycle: () => Promise<void>,
  { cycles = CYCLES, wholeProcess = false, warmUp = 3 } = {},
): Promise<{ sent: Record<string, number>; timers: number; promises: number; microtasks: number }> {
  for (let i = 0; i < warmUp; i++) await cycle(); // scripts cached, replica count read, objects made
  const sent = countSent(connection);
  const made = countAsyncResources({ wholeProcess });
  for (let i = 0; i < cycles; i++) await cycle();
  const counts = made.stop();
  const perCycle = (n: number | undefined) => (n ?? 0) / cycles;
  return {
    sent: Object.fromEntries(Object.entries(sent.stop()).map(([name, n]) => [name, perCycle(n)])),
    timers: perCycle(counts.Timeout),
    promises: perCycle(counts.PROMISE),
    microtasks: perCycle(counts.Microtask),
  };
}

/**
 * Promises one uncontended cycle may make: the kind's own, ioredis' (about 6 per command) and this
 * file's loop (4). Measured: 16 for the RLock and the read and write locks, 17 for the fair locks and
 * the spin lock, 18 for the faster multi-lock, 19 for the fenced and non-reentrant locks (their
 * kind's attempt is an async function), 15 for the expirable semaphore, 11 for the semaphore. Each
 * came down by one per script whose reply is decoded in the step that receives it
 * (`ScriptRunner.run`'s `read`), a lock's release by two more when it became one object
 * (`lib/kernel/release.ts`), and every kind's by one or two when `Handle.release()` and a lock's
 * attempt stopped being async functions. One spare: an occasional background read (the replica
 * count's refresh) adds a few over 100 cycles.
 */
const CYCLE_PROMISES = 20;

describe.each(LOCK_KINDS)('$kind uncontended cycle cost', (subject) => {
  it('sends its two scripts (and, with an unlock latch, its DEL), makes one lease timer and a bounded number of promises', async () => {
    const name = `cost:${randomUUID()}`;
    await withClient(async (redisson, connection) => {
      const lock = lockOf(redisson, subject, name);
      const { sent, timers, promises } = await costOf(connection, async () => {
        await (await lock.acquire()).release();
      });
      const { evalsha, del, ...others } = sent;
      expect(evalsha).toBe(2); // acquire, release
      expect(del ?? 0).toBeLessThanOrEqual(1); // the unlock latch, right behind its reply
      expect(others).toEqual({});
      expect(timers).toBeLessThanOrEqual(1); // the lease tracker's, when no other lease keeps it armed
      expect(promises).toBeLessThanOrEqual(CYCLE_PROMISES);
      // Nothing left behind: no lease, waiter or channel here, no key or latch in Redis.
      expect(redisson.diagnostics()).toEqual({ channels: 0, waiters: 0, leases: 0 });
      expect(await admin().keys('*')).toEqual(subject.keeps?.(name) ?? []);
    });
  });
});

/** What a hand-off cycle takes and gives back: a lock or a semaphore. */
interface Acquirable {
  acquire(): Promise<{ release(): Promise<void> }>;
}

/**
 * One hand-off: `holder` (another client's) takes its hold, `waiter` (of `redisson`) parks behind
 * it, the holder releases and the waiter takes its turn and releases. Parked is polled on
 * immediates, which make no timer or promise of their own.
 */
async function handOffCycle(holder: Acquirable, waiter: Acquirable, redisson: RedissonClient): Promise<void> {
  const held = await holder.acquire();
  const waiting = waiter.acquire();
  await new Promise<void>((resolve) => {
    const check = (): unknown => (redisson.diagnostics().waiters === 1 ? resolve() : setImmediate(check));
    check();
  });
  await held.release();
  await (await waiting).release();
}

/**
 * What 20 hand-offs (after 3 unmeasured) between `holder` and `waiter` cost, per hand-off: what the
 * waiter's connection sent, the timers and promises of the whole process, and the commands Redis
 * counted in all.
 */
async function handOffCost(holder: Acquirable, waiter: Acquirable, redisson: RedissonClient, connection: Redis) {
  const handOff = () => handOffCycle(holder, waiter, redisson);
  for (let i = 0; i < 3; i++) await handOff(); // scripts cached, replica count read, objects made
  const before = await commandCounts(admin());
  const cost = await costOf(connection, handOff, { cycles: 20, wholeProcess: true, warmUp: 0 });
  return { ...cost, commands: commandsBetween(before, await commandCounts(admin())) };
}

/**
 * Promises one hand-off may make, both clients together: the holder's cycle (about 16), and the
 * waiter's acquisition, subscription, three attempts and release. Measured: 52 for the RLock and
 * the read and write locks, 56 for the fair locks, 58 for the faster multi-lock, 64 for the fenced
 * and non-reentrant locks (72 while the SUBSCRIBE and UNSUBSCRIBE went through three async
 * functions, 78 while `Handle.release()` and a lock's attempt were async functions too, 84 before
 * the scripts' replies were read in the step that receives them), give or take an occasional
 * background read (the replica count's refresh).
 */
const HAND_OFF_PROMISES = 66;

describe.each(LOCK_KINDS.filter((subject) => subject.channel('x') !== undefined))('$kind hand-off cost', (subject) => {
  it('a parked waiter subscribes once and attempts three times; a hand-off makes at most four timers', async () => {
    const holderClient = client();
    const holderSubject = subject.shared ? { ...subject, factory: subject.shared.excludedBy } : subject;
    const name = `cost:${randomUUID()}`;
    const holder = lockOf(holderClient, holderSubject, name);
    await withClient(async (redisson, connection) => {
      const lock = lockOf(redisson, subject, name);
      const { sent, timers, promises, commands } = await handOffCost(holder, lock, redisson, connection);
      // The waiter's attempts: refused, refused again once subscribed, won once woken; then its release.
      expect(sent).toEqual({ evalsha: 4, del: 1 });
      expect([commands.subscribe, commands.unsubscribe]).toEqual([20, 20]); // no lingering channel: every waiter is a fresh owner
      // Both clients' lease timers, and the waiter's client timer queue set twice (the SUBSCRIBE's time
      // limit, then the channel's TTL re-check, each alone in the queue); give or take an occasional
      // background one (the process is counted whole).
      expect(timers).toBeLessThanOrEqual(4.25);
      expect(promises).toBeLessThanOrEqual(HAND_OFF_PROMISES);
      expect(redisson.diagnostics()).toEqual({ channels: 0, waiters: 0, leases: 0 });
      expect(holderClient.diagnostics()).toEqual({ channels: 0, waiters: 0, leases: 0 });
      expect(await admin().keys('*')).toEqual(subject.keeps?.(name) ?? []);
    });
  });
});

describe.each(SEMAPHORE_KINDS)('$kind uncontended cycle cost', (subject) => {
  it('sends its two scripts, makes at most one timer and a bounded number of promises', async () => {
    await withClient(async (redisson, connection) => {
      const factory = (redisson as unknown as Record<string, (name: string) => SemaphoreLike>)[subject.factory]!;
      const semaphore = factory.call(redisson, `cost:${randomUUID()}`);
      await semaphore.trySetPermits(1);
      const { sent, timers, promises } = await costOf(connection, async () => {
        await (await semaphore.acquire()).release();
      });
      const { evalsha, ...others } = sent;
      expect(evalsha).toBe(2);
      expect(others).toEqual({});
      expect(timers).toBeLessThanOrEqual(1);
      expect(promises).toBeLessThanOrEqual(CYCLE_PROMISES);
      expect(redisson.diagnostics()).toEqual({ channels: 0, waiters: 0, leases: 0 });
      expect(await semaphore.availablePermits()).toBe(1); // every permit back
    });
  });
});

interface SemaphoreLike {
  trySetPermits(permits: number): Promise<boolean>;
  availablePermits(): Promise<number>;
  acquire(): Promise<{ release(): Promise<void> }>;
}

/**
 * Promises the semaphore's uncontended cycle may make, in this file's loop: measured 11 (the
 * acquisition is its own request and attempts, each script's reply is decoded in the step that
 * receives it, and `Handle.release()` is no async function), one spare as above. The cycle made 17
 * when an attempt's reply went through three callbacks to the wait loop and a release's through two.
 */
const SEMAPHORE_CYCLE_PROMISES = 12;

describe('semaphore', () => {
  it('with no waiter of its own on the channel, a cycle sends each script at once (nothing is deferred to join it) and makes at most 12 promises', async () => {
    await withClient(async (redisson, connection) => {
      const semaphore = redisson.getSemaphore(`cost:${randomUUID()}`);
      await semaphore.trySetPermits(1);
      const { sent, microtasks, promises } = await costOf(connection, async () => {
        await (await semaphore.acquire()).release();
      });
      expect(sent).toEqual({ evalsha: 2 });
      expect(microtasks).toBe(0); // a batch waits for its run of code to end on a microtask
      expect(promises).toBeLessThanOrEqual(SEMAPHORE_CYCLE_PROMISES);
      expect(await semaphore.availablePermits()).toBe(1);
    });
  });
});

/**
 * Promises one semaphore hand-off may make, both clients together: the holder's cycle, and the
 * waiter's acquisition, subscription, three attempts and release. Measured: 46 (54 while the
 * SUBSCRIBE and UNSUBSCRIBE went through three async functions, 56 while `Handle.release()` was an
 * async function too, 70 while an attempt's reply went through three callbacks and the
 * semaphore's acquisition was three objects), two spare as above.
 */
const SEMAPHORE_HAND_OFF_PROMISES = 48;

describe('semaphore hand-off', () => {
  it('a parked waiter subscribes once and attempts three times; the release of another client wakes it by message', async () => {
    const name = `cost:${randomUUID()}`;
    const holder = client().getSemaphore(name);
    await holder.trySetPermits(1);
    await withClient(async (redisson, connection) => {
      const semaphore = redisson.getSemaphore(name);
      const { sent, timers, promises, commands } = await handOffCost(holder, semaphore, redisson, connection);
      // The waiter's attempts: refused, refused again once subscribed, won once woken; then its release.
      expect(sent).toEqual({ evalsha: 4 });
      expect([commands.subscribe, commands.unsubscribe]).toEqual([20, 20]);
      // The waiter's client timer queue set twice (the SUBSCRIBE's time limit, then the wait's
      // re-check bound); plain permits have no lease timer. Give or take an occasional background one.
      expect(timers).toBeLessThanOrEqual(2.25);
      expect(promises).toBeLessThanOrEqual(SEMAPHORE_HAND_OFF_PROMISES);
      expect(redisson.diagnostics()).toEqual({ channels: 0, waiters: 0, leases: 0 });
      expect(await semaphore.availablePermits()).toBe(1);
      expect(await admin().keys('*')).toEqual([name]); // the count alone: no latch or other key
    });
  });
});

describe('permit-expirable semaphore', () => {
  it('a leased cycle sends its two scripts, makes one timer and at most 16 promises', async () => {
    await withClient(async (redisson, connection) => {
      const semaphore = redisson.getPermitExpirableSemaphore(`cost:${randomUUID()}`);
      await semaphore.trySetPermits(1);
      const { sent, timers, promises } = await costOf(connection, async () => {
        await (await semaphore.acquire({ leaseTime: 30_000 })).release();
      });
      expect(sent).toEqual({ evalsha: 2 });
      expect(timers).toBeLessThanOrEqual(1); // the lease tracker's, armed for the lease's end
      expect(promises).toBeLessThanOrEqual(16); // measured 15; 16 while Handle.release() was async, 19 before its scripts' replies were read in one step
      expect(redisson.diagnostics()).toEqual({ channels: 0, waiters: 0, leases: 0 });
      expect(await semaphore.availablePermits()).toBe(1); // every permit back
    });
  });

  it('draws entropy once per 256 permit ids, not once per id', async () => {
    const randomBytes = jest.spyOn(crypto, 'randomBytes');
    const randomFillSync = jest.spyOn(crypto, 'randomFillSync');
    try {
      await withClient(async (redisson) => {
        const semaphore = redisson.getPermitExpirableSemaphore(`cost:${randomUUID()}`);
        await semaphore.trySetPermits(1);
        for (let i = 0; i < 300; i++) await (await semaphore.acquire({ leaseTime: 30_000 })).release();
      });
      expect(randomBytes).not.toHaveBeenCalled();
      expect(randomFillSync.mock.calls.length).toBeLessThanOrEqual(2);
    } finally {
      randomBytes.mockRestore();
      randomFillSync.mockRestore();
    }
  });

  it("a parked acquisition's attempts send the same ids: a refused attempt adds none", async () => {
    const name = `cost:${randomUUID()}`;
    await withClient(async (redisson, connection) => {
      const semaphore = redisson.getPermitExpirableSemaphore(name);
      await semaphore.trySetPermits(0);
      const spy = jest.spyOn(connection, 'sendCommand');
      const waiting = semaphore.acquire(2, { leaseTime: 30_000 });
      await eventually(() => redisson.diagnostics().waiters === 1, 5_000, 'the acquisition to park');
      await semaphore.addPermits(2);
      const handle = await waiting;
      // try-acquire: sha, 3 keys, then permits, expiry, now, the no-expiry score, the 2 ids, the publish command.
      const attempts = spy.mock.calls
        .map(([command]) => command)
        .filter(({ name, args }) => name === 'evalsha' && args.length === 12 && Buffer.isBuffer(args[9]))
        .map(({ args }) => args.slice(9, 11).map((id) => (id as Buffer).toString('hex')));
      spy.mockRestore();
      expect(attempts.length).toBeGreaterThanOrEqual(3); // refused, refused once subscribed, won once woken
      for (const ids of attempts) expect(ids).toEqual(handle.permitIds);
      await handle.release();
    });
  });
});
