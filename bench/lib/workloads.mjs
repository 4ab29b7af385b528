// Loops shared by scenarios and by the contender child process.
import { setImmediate as tick } from 'node:timers/promises';

/**
 * Read-modify-write of `counterKey` under `lockKey` until the wall clock passes `until` (ms since the
 * epoch, so that processes agree). The await between read and write makes any overlap lose an update.
 */
export async function counterWorker(adapter, redis, { lockKey, counterKey, until }) {
  const waits = [];
  let errors = 0;
  while (Date.now() < until) {
    const asked = performance.now();
    let release;
    try {
      release = await adapter.lock(lockKey);
    } catch {
      errors += 1;
      continue;
    }
    waits.push(performance.now() - asked);
    const value = Number((await redis.get(counterKey)) ?? 0);
    await tick();
    await redis.set(counterKey, value + 1);
    await release();
  }
  return { acquisitions: waits.length, waits, errors };
}

/**
 * How long a timed run in one process first runs its workload, ms (where workers contend, on objects
 * of the warm-up's own): so that a short run measures the lock rather than the JIT compiling its code
 * (the wait path's too).
 */
export const WARM_UP_MS = 1_000;

/**
 * Runs `cycle` again and again for `ms` (default {@link WARM_UP_MS}) before a timed part in one
 * process: connections open, scripts loaded, code compiled. A count of cycles is no such bound: the
 * library's RedLock needed thousands of cycles (a few seconds) before its cycle rate settled, where
 * the 100 cycles the bench gave it took 0.03 s.
 */
export async function warmUp(cycle, ms = WARM_UP_MS) {
  const until = performance.now() + ms;
  while (performance.now() < until) await cycle();
}

/** Runs `cycle` `cycles` times, one after the other: cycles/s, client CPU µs per cycle, and each cycle's ms. */
export async function timedCycles(cycles, cycle) {
  const samples = new Float64Array(cycles);
  const cpuBefore = process.cpuUsage();
  const start = performance.now();
  for (let i = 0; i < cycles; i++) {
    const t = performance.now();
    await cycle();
    samples[i] = performance.now() - t;
  }
  const elapsed = performance.now() - start;
  const { user, system } = process.cpuUsage(cpuBefore);
  return { rate: (cycles / elapsed) * 1000, cpu: (user + system) / cycles, samples };
}

/**
 * The same for workers spread over processes. A process then runs a few hundred operations a second
 * (8 of them sharing 2 cores), so its code takes far longer to be compiled, and the library's longer
 * path longer than a floor's. Fair lock, 8 processes, client CPU per update against its floor: after
 * 4 s of warm-up 785 against 524 µs (5 reps), after 8 s 428 against 351 (3 reps), after 16 s 432
 * against 476 (medians of 10 reps). After 16 s none of 4 read/write reps had the readers' slow reps
 * (twice the CPU per read) of 4 s.
 */
export const PROCESS_WARM_UP_MS = 16_000;

/** The warm-up spread over processes for a run: {@link PROCESS_WARM_UP_MS}, or 2 s in a quick one. */
export function processWarmUpMs({ quick }) {
  return quick ? 2_000 : PROCESS_WARM_UP_MS;
}

/**
 * The lock and counter a contended run's workers contend for during its warm-up, before the timed
 * part: so that a short run measures the lock, not the JIT compiling its code (the wait path's
 * too), for every adapter the same way.
 */
export function warmUpLock(lockKey, counterKey) {
  return { lockKey: `${lockKey}:warm-up`, counterKey: `${counterKey}:warm-up` };
}

/** Summary of several counter workers: throughput, fairness, waits. */
export function summarizeWorkers(results, elapsedMs, counter) {
  const counts = results.map((r) => r.acquisitions);
  const total = counts.reduce((a, b) => a + b, 0);
  const waits = results.flatMap((r) => r.waits);
  return {
    total,
    counts,
    waits,
    opsPerSec: (total / elapsedMs) * 1000,
    lostUpdates: total - counter,
    fairness: Math.max(...counts) > 0 ? Math.min(...counts) / Math.max(...counts) : 0,
    errors: results.reduce((a, r) => a + r.errors, 0),
  };
}
