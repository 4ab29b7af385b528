// 5c. Client CPU per operation against the protocol floor, paired in one process: the library and
// its kind's floor adapter run the many-locks workload (50 workers over 1 000 keys, one INCR under
// each hold) in alternating blocks, so that a noisy machine slows both alike. Each block's CPU
// (process.cpuUsage) is divided by its operations; the ratio is the median of the blocks' ratios.
import Redis from 'ioredis';
import { median, withTimeout } from '../lib/stats.mjs';
import { warmUp } from '../lib/workloads.mjs';

const WORKERS = 50;
const KEYS = 1_000;

/** Each case: the library adapter and the floor it is paired with, and how they take a hold. */
const PAIRS = {
  rlock: { library: 'ioredisson', floor: 'floor-rlock', setup: 'setup', take: 'lock' },
  'fair-lock': { library: 'ioredisson-fair', floor: 'floor-fair-lock', setup: 'setup', take: 'lock' },
  semaphore: { library: 'ioredisson', floor: 'floor-semaphore', setup: 'setupSemaphore', take: 'acquire' },
};

export default {
  name: 'client-cpu',
  title: 'Client CPU per operation, paired with the floor',
  takesPart: (adapter) => adapter.id === 'ioredisson',
  cases: ({ quick }) =>
    Object.keys(PAIRS).map((id) => ({
      id,
      label: `${id}: many-locks workload, library and floor in alternate blocks`,
      blocks: quick ? 6 : 12,
      ops: 2_000,
    })),
  columns: [
    { key: 'cpuRatio', label: 'client CPU ÷ floor', better: 'lower', main: true },
    { key: 'libraryCpu', label: 'library µs/op' },
    { key: 'floorCpu', label: 'floor µs/op' },
    { key: 'rateRatio', label: 'ops/s ÷ floor' },
  ],

  async run(env, _adapter, { id, blocks, ops }) {
    const pair = PAIRS[id];
    const redis = new Redis(env.url);
    const sides = [];
    try {
      for (const role of ['library', 'floor']) {
        const mod = await import(`../adapters/${pair[role]}.mjs`);
        const lib = await mod[pair.setup]({ url: env.url });
        const prefix = `bench:cpu:${role}`;
        if (lib.prepare) for (let i = 0; i < KEYS; i++) await lib.prepare(`${prefix}:${i}`, 1);
        sides.push({ lib, prefix, cpu: 0, ops: 0 });
      }
      const block = async (side, n) => {
        let left = n;
        const worker = async () => {
          while (left-- > 0) {
            const release = await side.lib[pair.take](`${side.prefix}:${Math.floor(Math.random() * KEYS)}`);
            await redis.incr('bench:ops');
            await release();
          }
        };
        const cpuBefore = process.cpuUsage();
        const start = performance.now();
        await withTimeout(Promise.all(Array.from({ length: WORKERS }, worker)), 60_000, 'a block of operations');
        const { user, system } = process.cpuUsage(cpuBefore);
        return { cpu: (user + system) / n, ms: performance.now() - start };
      };
      for (const side of sides) await warmUp(() => block(side, ops));
      const cpuRatios = [];
      const rateRatios = [];
      for (let i = 0; i < blocks; i++) {
        const order = i % 2 ? [0, 1] : [1, 0];
        const result = [];
        for (const s of order) result[s] = await block(sides[s], ops);
        for (const s of [0, 1]) {
          sides[s].cpu += result[s].cpu;
          sides[s].ops += 1;
        }
        cpuRatios.push(result[0].cpu / result[1].cpu);
        rateRatios.push(result[1].ms / result[0].ms);
      }
      return {
        cpuRatio: median(cpuRatios),
        libraryCpu: sides[0].cpu / sides[0].ops,
        floorCpu: sides[1].cpu / sides[1].ops,
        rateRatio: median(rateRatios),
      };
    } finally {
      for (const side of sides) await side.lib.teardown();
      redis.disconnect();
    }
  },
};
