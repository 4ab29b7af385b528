// 5b. Many locks throughput: workers each locking a random key of many, with a short critical
// section (one INCR), for a fixed time.
import Redis from 'ioredis';
import { latency, withTimeout } from '../lib/stats.mjs';
import { WARM_UP_MS } from '../lib/workloads.mjs';

export default {
  name: 'many-locks',
  title: 'Many locks throughput',
  takesPart: (adapter) => adapter.mutex,
  // Three short reps per rep: the rate ratio is a target, and short runs pair up closer in time.
  splitReps: 3,
  cases: ({ duration }) => {
    const ms = duration ?? 700;
    return [{ id: '50x1000', label: `50 workers over 1 000 keys, ${ms / 1000} s`, workers: 50, keys: 1_000, ms }];
  },
  columns: [
    { key: 'opsPerSec', label: 'ops/s', better: 'higher', main: true },
    { key: 'p50', label: 'cycle p50 ms' },
    { key: 'p99', label: 'cycle p99 ms' },
    { key: 'errors', label: 'errors' },
  ],

  async run(env, adapter, { workers, keys, ms }) {
    const lib = await adapter.setup({ url: env.url });
    const redis = new Redis(env.url);
    const cycles = [];
    let errors = 0;
    const worker = async (until) => {
      while (performance.now() < until) {
        const t = performance.now();
        try {
          const release = await lib.lock(`bench:key:${Math.floor(Math.random() * keys)}`);
          await redis.incr('bench:ops');
          await release();
          cycles.push(performance.now() - t);
        } catch {
          errors += 1;
        }
      }
    };
    try {
      await worker(performance.now() + WARM_UP_MS); // warm-up, one worker
      cycles.length = 0;
      const start = performance.now();
      const all = Promise.all(Array.from({ length: workers }, () => worker(start + ms)));
      await withTimeout(all, ms + 8_000, 'the last waits (wake-up missed?)');
      const elapsed = performance.now() - start;
      return { opsPerSec: (cycles.length / elapsed) * 1000, ...latency(cycles), errors };
    } finally {
      await lib.teardown();
      redis.disconnect();
    }
  },
};
