// Small numeric and timing helpers.
import { setTimeout as sleep } from 'node:timers/promises';
import v8 from 'node:v8';
import vm from 'node:vm';

export { sleep };

/** The q-quantile (0..1) of `values`, by linear interpolation; NaN when empty. */
export function quantile(values, q) {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

export const median = (values) => quantile(values.filter((v) => Number.isFinite(v)), 0.5);

/** p50 and p99 of latency samples in ms. */
export function latency(samples) {
  return { p50: quantile(samples, 0.5), p99: quantile(samples, 0.99) };
}

v8.setFlagsFromString('--expose-gc');
const collect = vm.runInNewContext('gc');

/** Heap used after a full collection, in bytes. */
export async function settledHeap() {
  for (let i = 0; i < 3; i++) {
    collect();
    await sleep(10);
  }
  return process.memoryUsage().heapUsed;
}

/** Rejects with a timeout error if `promise` has not settled within `ms`. */
export function withTimeout(promise, ms, what) {
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${Math.round(ms / 1000)} s`)), ms);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

/** Resolves when `check()` is true, polling every `every` ms; rejects after `ms`. */
export async function until(check, ms, what, every = 20) {
  const end = performance.now() + ms;
  while (!(await check())) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(every);
  }
}
