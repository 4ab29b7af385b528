// 4. Idle waiters: N waiters parked on a held lock. What does waiting cost while nothing happens,
// and what does draining them cost? Waiters connect through the counting proxy, the holder directly.
import { idleCost } from '../lib/idle.mjs';
import { breakdown, total } from '../lib/proxy-client.mjs';
import { commandStats, statsDelta } from '../lib/redis-info.mjs';
import { settledHeap, sleep, until, withTimeout } from '../lib/stats.mjs';

const KEY = 'bench:idle';
const DRAIN_LIMIT = 15_000;

export default {
  name: 'idle-waiters',
  title: 'Idle waiters on a held lock',
  takesPart: (adapter) => adapter.mutex,
  cases: ({ quick, waiters }) =>
    (waiters ?? (quick ? [100] : [100, 1_000])).map((n) => ({
      id: `${n}`,
      label: `${n} waiters, ${quick ? 1 : 3} s idle`,
      waiters: n,
      idleMs: quick ? 1_000 : 3_000,
    })),
  columns: [
    { key: 'cmdsPerSec', label: 'Redis cmds/s idle (commandstats)', better: 'lower', main: true },
    { key: 'clientCmdsPerSec', label: 'waiter cmds/s idle (sent)' },
    { key: 'cpuPct', label: 'CPU % of a core' },
    { key: 'bytesPerWaiter', label: 'heap B/waiter' },
    { key: 'drainMs', label: 'drain ms' },
    { key: 'drainCmdsPerWaiter', label: 'drain cmds/waiter (sent)' },
    { key: 'drainRedisCmdsPerWaiter', label: 'drain Redis cmds/waiter (commandstats)' },
  ],

  async run(env, adapter, { waiters, idleMs }) {
    const holder = await adapter.setup({ url: env.url });
    const lib = await adapter.setup({ url: env.proxy.url });
    try {
      await (await lib.lock(KEY))(); // warm-up: connections, scripts
      const release = await holder.lock(KEY);
      const heapBefore = await settledHeap();
      const done = Promise.all(Array.from({ length: waiters }, () => lib.lock(KEY).then((r) => r())));
      done.catch(() => undefined);
      if (lib.diagnostics) await until(() => lib.diagnostics().waiters === waiters, 10_000, 'waiters to park');
      await sleep(500);
      const heapParked = await settledHeap();

      const idle = await idleCost(env, idleMs);

      const stats1 = await commandStats(env.admin);
      const t1 = performance.now();
      await release();
      // A drain that stalls is reported, not thrown: the idle figures above still stand.
      const drained = await withTimeout(done, DRAIN_LIMIT, 'drain').then(() => true, () => false);
      const drainMs = drained ? performance.now() - t1 : NaN;
      const drainCounts = await env.proxy.take();
      const drainClient = total(drainCounts);
      const drainRedis = total(statsDelta(stats1, await commandStats(env.admin)));
      return {
        cmdsPerSec: idle.idleCmdsPerSec,
        clientCmdsPerSec: idle.idleClientCmdsPerSec,
        cpuPct: idle.cpuPct,
        bytesPerWaiter: (heapParked - heapBefore) / waiters,
        drainMs,
        drainCmdsPerWaiter: drained ? drainClient / waiters : NaN,
        drainRedisCmdsPerWaiter: drained ? drainRedis / waiters : NaN,
        drainSent: drained ? breakdown(drainCounts) : `not drained within ${DRAIN_LIMIT / 1000} s`,
      };
    } finally {
      await holder.teardown();
      await lib.teardown();
    }
  },
};
