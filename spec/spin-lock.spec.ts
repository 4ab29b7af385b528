import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { InvalidArgumentError, RSpinLock, type BackOffOptions } from '../lib';
import { toBackOff } from '../lib/kinds/spin-lock';
import { delay, useRedis } from './helpers/fixture';
import { commandCounts, commandsBetween, eventually } from './helpers/redis-server';

const { admin, client, server } = useRedis();
const WORKER = join(__dirname, 'contract', 'fixtures', 'lock-worker.mjs');

/** Calls of the (s)subscribe and (s)publish commands between two snapshots. */
function pubSubCalls(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  const delta = commandsBetween(before, after);
  return Object.fromEntries(Object.entries(delta).filter(([name]) => /subscribe|publish/.test(name)));
}

/** Script calls (EVALSHA and EVAL) in a delta of command counts. */
const scriptCalls = (delta: Record<string, number>): number => (delta.evalsha ?? 0) + (delta.eval ?? 0);

describe('SpinLock across processes', () => {
  it('excludes 3 processes (3 x 40 increments lose none) without a single SUBSCRIBE or PUBLISH', async () => {
    // The test holds the lock while the workers start, so every one of them has to spin for it.
    const gate = await client().getSpinLock('spin:counter-lock').acquire({ leaseTime: 30_000 });
    const before = await commandCounts(admin());
    const workers = [1, 2, 3].map(() =>
      spawn(process.execPath, [WORKER, server().url, '40', 'getSpinLock', 'spin:counter-lock', 'spin:counter'], {
        stdio: ['ignore', 'ignore', 'pipe'],
      }),
    );
    const stderr: string[] = [];
    for (const worker of workers) worker.stderr.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
    // Until each worker has been refused at least once: one acquire attempt each beyond the holds.
    await eventually(
      async () => scriptCalls(commandsBetween(before, await commandCounts(admin()))) >= 3,
      30_000,
      'every worker to try the held lock',
    );
    await delay(200);
    await gate.release();
    const codes = await Promise.all(workers.map(async (worker) => (await once(worker, 'exit'))[0] as number));
    expect(stderr.join('')).toBe('');
    expect(codes).toEqual([0, 0, 0]);
    expect(await admin().get('spin:counter')).toBe('120');
    const after = await commandCounts(admin());
    expect(pubSubCalls(before, after)).toEqual({});
    // They did contend: more acquire attempts than the 120 acquisitions (plus the 121 unlocks).
    expect(scriptCalls(commandsBetween(before, after))).toBeGreaterThan(241);
  });
});

describe('SpinLock back-off', () => {
  const pauses = (options: BackOffOptions | undefined, failures: number, runs = 200): number[] => {
    const backOff = toBackOff(options);
    return Array.from({ length: runs }, () => backOff(failures));
  };

  it("defaults to Redisson's exponential back-off: 1 ms first, doubling plus jitter, capped at 128 ms", () => {
    expect(pauses(undefined, 0)).toEqual(Array(200).fill(1));
    // Step 1 adds a jitter below 1, i.e. none: 2 ms exactly.
    expect(pauses(undefined, 1)).toEqual(Array(200).fill(2));
    for (let failures = 2; failures < 12; failures++) {
      const floor = Math.min(128, 2 ** failures);
      // Each step n adds at most n - 1 ms, doubled by every later step.
      let ceiling = 1;
      for (let step = 1; step <= failures; step++) ceiling = Math.min(128, ceiling * 2 + step - 1);
      const seen = pauses(undefined, failures);
      for (const pause of seen) {
        expect(Number.isInteger(pause)).toBe(true);
        expect(pause).toBeGreaterThanOrEqual(floor);
        expect(pause).toBeLessThanOrEqual(ceiling);
      }
      if (floor < 128) expect(new Set(seen).size).toBeGreaterThan(1); // jittered
    }
    expect(pauses(undefined, 10_000)).toEqual(Array(200).fill(128));
  });

  it('takes its own initial delay, maximum and multiplier, and a constant pause (64 ms by default)', () => {
    const custom: BackOffOptions = { type: 'exponential', initialDelay: 10, maxDelay: 50, multiplier: 3 };
    expect(pauses(custom, 0)).toEqual(Array(200).fill(10));
    expect(pauses(custom, 1)).toEqual(Array(200).fill(30));
    expect(pauses(custom, 2)).toEqual(Array(200).fill(50));
    expect(pauses({ type: 'exponential', initialDelay: 5, maxDelay: 5, multiplier: 1 }, 7)).toEqual(Array(200).fill(5));
    expect(pauses({ type: 'constant' }, 0)).toEqual(Array(200).fill(64));
    expect(pauses({ type: 'constant', delay: 7 }, 1_000)).toEqual(Array(200).fill(7));
  });

  it('rejects a bad back-off with InvalidArgumentError, in getSpinLock, before anything is sent', async () => {
    const redisson = client();
    const before = await commandCounts(admin());
    const bad = [
      null,
      'exponential',
      {},
      { type: 'linear' },
      { type: 'constant', delay: 0 },
      { type: 'constant', delay: 1.5 },
      { type: 'constant', initialDelay: 5 },
      { type: 'exponential', initialDelay: 0 },
      { type: 'exponential', initialDelay: 100, maxDelay: 50 },
      { type: 'exponential', multiplier: 0.5 },
      { type: 'exponential', multiplier: Number.NaN },
      { type: 'exponential', delay: 64 },
    ];
    for (const backOff of bad) {
      expect(() => redisson.getSpinLock('spin:bad', backOff as never)).toThrow(InvalidArgumentError);
    }
    expect(redisson.getSpinLock('spin:ok', { type: 'constant', delay: 10 })).toBeInstanceOf(RSpinLock);
    expect(commandsBetween(before, await commandCounts(admin()))).toEqual({});
  });

  it('paces a waiter by its back-off: a constant 200 ms pause means about 5 attempts a second', async () => {
    const holder = client();
    const waiter = client();
    await holder.getSpinLock('spin:paced').lock({ leaseTime: 30_000 });
    const lock = waiter.getSpinLock('spin:paced', { type: 'constant', delay: 200 });
    expect(await lock.tryLock()).toBe(false); // loads the script
    const before = await commandCounts(admin());
    const startedAt = performance.now();
    expect(await lock.tryLock({ waitTime: 1_000 })).toBe(false);
    const elapsed = performance.now() - startedAt;
    const attempts = commandsBetween(before, await commandCounts(admin())).evalsha ?? 0;
    expect(elapsed).toBeGreaterThanOrEqual(950);
    // 1 + one per pause: 6 on an idle machine; a loaded one manages fewer, never more.
    expect(attempts).toBeGreaterThanOrEqual(2);
    expect(attempts).toBeLessThanOrEqual(7);
  });

  it('never sleeps past the holder lease: a pause is cut to the TTL the attempt reported', async () => {
    const holder = client();
    const waiter = client();
    await holder.getSpinLock('spin:short').lock({ leaseTime: 300 });
    const lock = waiter.getSpinLock('spin:short', { type: 'constant', delay: 60_000 });
    const startedAt = performance.now();
    expect(await lock.tryLock({ waitTime: 20_000 })).toBe(true);
    expect(performance.now() - startedAt).toBeLessThan(10_000);
    await lock.unlock();
  });
});

describe('SpinLock interop with RLock on the same name', () => {
  it('is stored exactly as an RLock: one <clientId>:<threadId> field with the hold count', async () => {
    const redisson = client();
    const lock = redisson.getSpinLock('spin:format');
    await redisson.run(async () => {
      await lock.lock();
      await lock.lock();
      const fields = await admin().hgetall('spin:format');
      expect(Object.keys(fields)).toHaveLength(1);
      expect(Object.keys(fields)[0]).toMatch(new RegExp(`^${redisson.id}:[1-9][0-9]*$`));
      expect(Object.values(fields)).toEqual(['2']);
      await lock.unlock();
      await lock.unlock();
    });
    expect(await admin().exists('spin:format')).toBe(0);
  });

  it('an RLock holder excludes a spin waiter, which takes the lock once the RLock is released', async () => {
    const holder = client();
    const waiter = client();
    const held = await holder.getLock('spin:interop').acquire({ leaseTime: 30_000 });
    const spin = waiter.getSpinLock('spin:interop');
    expect(await spin.tryLock({ waitTime: 300 })).toBe(false);
    const waiting = spin.tryLock({ waitTime: 20_000 });
    await delay(200);
    const releasedAt = performance.now();
    await held.release();
    expect(await waiting).toBe(true);
    expect(performance.now() - releasedAt).toBeLessThan(5_000); // a back-off pause, not the lease
    expect(await holder.getLock('spin:interop').tryLock()).toBe(false);
    await spin.unlock();
    expect(await holder.getLock('spin:interop').tryLock()).toBe(true);
    await holder.getLock('spin:interop').unlock();
  });

  it('a spin holder excludes an RLock waiter, which notices the (silent) release within the lease', async () => {
    const holder = client();
    const waiter = client();
    const before = await commandCounts(admin());
    const held = await holder.getSpinLock('spin:interop2').acquire({ leaseTime: 1_500 });
    const rlock = waiter.getLock('spin:interop2');
    expect(await rlock.tryLock({ waitTime: 200 })).toBe(false);
    const waiting = rlock.tryLock({ waitTime: 20_000 });
    await delay(200);
    await held.release();
    // The spin release publishes nothing; the RLock waiter's wait is bounded by the 1.5 s TTL.
    expect(await waiting).toBe(true);
    expect(commandsBetween(before, await commandCounts(admin())).publish ?? 0).toBe(0);
    await rlock.unlock();
  });

  it('shares holds with an RLock of the same owner: the owner re-enters across the two kinds', async () => {
    const redisson = client();
    await redisson.run(async () => {
      const rlock = redisson.getLock('spin:shared');
      const spin = redisson.getSpinLock('spin:shared');
      await rlock.lock();
      expect(await spin.tryLock()).toBe(true);
      expect(await admin().hvals('spin:shared')).toEqual(['2']);
      await spin.unlock();
      await rlock.unlock();
    });
    expect(await admin().exists('spin:shared')).toBe(0);
    expect(redisson.diagnostics()).toEqual({ channels: 0, waiters: 0, leases: 0 });
  });
});
