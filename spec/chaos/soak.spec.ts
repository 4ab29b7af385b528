import { checkExclusion, type SectionEvent } from '../helpers/exclusion';
import { useRedis } from '../helpers/fixture';
import { eventually } from '../helpers/redis-server';
import { trackTimers } from '../helpers/timers';

const { admin, client } = useRedis();

/** Cycles in all; SOAK_CYCLES shortens or lengthens the run. */
const CYCLES = Number(process.env.SOAK_CYCLES ?? 100_000);
const TASKS = 8;
const LOCKS = 4;

function heapUsed(): number {
  global.gc?.();
  return process.memoryUsage().heapUsed;
}

describe('soak', () => {
  it(`${CYCLES} contended lock/unlock cycles leave no memory, keys, subscriptions, timers or listeners behind`, async () => {
    const baselineResources = process.getActiveResourcesInfo().length;
    const redisson = client();
    const timers = trackTimers();
    const lost: unknown[] = [];
    redisson.on('lockLost', (event) => lost.push(event));

    // Warm up (script cache, connections, JIT) before taking the heap baseline.
    await redisson.getLock('soak:0').using(() => undefined);
    const heapBefore = heapUsed();

    const events: SectionEvent[][] = Array.from({ length: LOCKS }, () => []);
    let counters = Array.from({ length: LOCKS }, () => 0);
    const cyclesPerTask = Math.floor(CYCLES / TASKS);
    await Promise.all(
      Array.from({ length: TASKS }, async (_, task) => {
        for (let i = 0; i < cyclesPerTask; i++) {
          const lock = (task + i) % LOCKS;
          const handle = await redisson.getLock(`soak:${lock}`).acquire();
          const log = i % 100 === 0; // sample sections so the log itself does not dominate the heap
          if (log) events[lock]!.push({ worker: `task-${task}`, kind: 'enter', at: performance.now() });
          const value = counters[lock]!;
          await Promise.resolve();
          counters[lock] = value + 1;
          if (log) events[lock]!.push({ worker: `task-${task}`, kind: 'exit', at: performance.now() });
          await handle.release();
        }
      }),
    );
    const total = counters.reduce((a, b) => a + b, 0);
    const overlaps = events.map((log) => checkExclusion(log, log.length / 2).overlaps);
    events.length = 0;
    counters = [];

    const heapGrowth = heapUsed() - heapBefore;
    await new Promise((resolve) => setImmediate(resolve));
    console.log(`soak: ${total} cycles, heap growth ${(heapGrowth / 1024).toFixed(0)} KiB`);
    expect(total).toBe(cyclesPerTask * TASKS);
    expect(overlaps).toEqual([0, 0, 0, 0]);
    expect(lost).toEqual([]);
    expect(heapGrowth).toBeLessThan(5 * 1024 * 1024);
    expect(redisson.diagnostics()).toEqual({ channels: 0, waiters: 0, leases: 0 });
    expect(await timers.settle()).toBe(0); // short-lived ones (the 20 ms latch batch) may still end
    timers.stop();
    await eventually(async () => (await admin().dbsize()) === 0, 5_000, 'no key left');
    await eventually(async () => ((await admin().pubsub('CHANNELS')) as string[]).length === 0, 5_000, 'no channel left');

    await redisson.shutdown();
    expect(await admin().pubsub('CHANNELS')).toEqual([]);
    // After shutdown only the caller's own connection (and the test's) hold the loop; the closed
    // subscriber's socket may take a moment to go on a loaded machine (once seen: one more).
    await eventually(
      () => process.getActiveResourcesInfo().length <= baselineResources + 1,
      5_000,
      "nothing but the caller's connection holding the loop",
    );
  });
});
