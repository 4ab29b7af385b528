// 8. Semaphore: 3 permits shared by 10 workers in 3 processes. Each worker takes a permit, counts
// itself in a shared holders counter (its peak shows whether a fourth holder ever got in) and gives
// the permit back. Then the same workers park behind 3 permits the parent holds, through the counting
// proxy: what waiting costs while nothing happens, and what the drain costs per waiter.
import { allNext, forkWorker, runAllFor, stopAll } from '../lib/children.mjs';
import { idleCost, timedDrain } from '../lib/idle.mjs';
import { breakdown, total } from '../lib/proxy-client.mjs';
import { acquireCalls, addCounts } from '../lib/script-counter.mjs';
import { latency, sleep } from '../lib/stats.mjs';
import { processWarmUpMs } from '../lib/workloads.mjs';

const KEY = 'bench:semaphore';
const HOLDERS = 'bench:semaphore-holders';

/** Workers per process: `workers` split as evenly as it goes over `processes`. */
const split = (workers, processes) => Array.from({ length: processes }, (_, i) => Math.floor(workers / processes) + (i < workers % processes ? 1 : 0));

export default {
  name: 'semaphore',
  title: 'Semaphore across processes',
  takesPart: (adapter) => typeof adapter.setupSemaphore === 'function',
  cases: ({ quick, duration }) => {
    const ms = duration ?? (quick ? 1_000 : 2_000);
    const idleMs = quick ? 1_000 : 3_000;
    return [{ id: '3p10w3', label: `3 permits, 10 workers in 3 processes, ${ms / 1000} s; then parked, ${idleMs / 1000} s idle`, permits: 3, workers: 10, processes: 3, ms, idleMs, warmUpMs: processWarmUpMs({ quick }) }];
  },
  columns: [
    { key: 'opsPerSec', label: 'ops/s', better: 'higher', main: true },
    { key: 'peakHolders', label: 'peak holders' },
    { key: 'fairness', label: 'fairness min/max' },
    { key: 'p50', label: 'wait p50 ms' },
    { key: 'p99', label: 'wait p99 ms' },
    { key: 'acquireCalls', label: 'acquire script calls/op (sent)' },
    { key: 'clientCpu', label: 'client CPU µs/op' },
    { key: 'errors', label: 'errors' },
    { key: 'idleCmdsPerSec', label: 'Redis cmds/s idle (commandstats)' },
    { key: 'idleClientCmdsPerSec', label: 'waiter cmds/s idle (sent)' },
    { key: 'drainMs', label: 'drain ms' },
    { key: 'drainCmdsPerWaiter', label: 'drain cmds/waiter (sent)' },
  ],

  async run(env, adapter, { permits, workers, processes, ms, idleMs, warmUpMs }) {
    const script = new URL('../lib/permit-worker.mjs', import.meta.url);
    const perProcess = split(workers, processes);
    const children = perProcess.map((n) => forkWorker(script, [adapter.id, env.url, env.proxy.url, KEY, String(permits), String(n), HOLDERS]));
    const holder = await adapter.setupSemaphore({ url: env.url });
    try {
      await holder.prepare(KEY, permits);
      await allNext(children, 'worker start-up', 20_000);

      await runAllFor(children, warmUpMs, true);
      const { results, elapsed } = await runAllFor(children, ms);
      const loops = results.flatMap((r) => r.workers);
      const ops = loops.reduce((n, w) => n + w.ops, 0);
      const counts = loops.map((w) => w.ops);
      const scripts = addCounts(results.map((r) => r.scripts));

      // Idle: the parent takes every permit; each worker parks once, through the proxy.
      const releases = [];
      for (let i = 0; i < permits; i++) releases.push(await holder.acquire(KEY));
      for (const child of children) child.send({ park: true });
      await allNext(children, 'the waiters to park', 15_000);
      await sleep(300);
      const { idleCmdsPerSec, idleClientCmdsPerSec } = await idleCost(env, idleMs);
      const { drainMs, drainCounts } = await timedDrain(env, async () => {
        await Promise.all(releases.map((release) => release()));
        await allNext(children, 'the drain', 30_000);
      });

      return {
        opsPerSec: (ops / elapsed) * 1000,
        peakHolders: Math.max(...loops.map((w) => w.peak)),
        fairness: Math.max(...counts) > 0 ? Math.min(...counts) / Math.max(...counts) : 0,
        ...latency(loops.flatMap((w) => w.waits)),
        ...(adapter.pkg === 'ioredisson' || adapter.floorOf ? { acquireCalls: acquireCalls(scripts) / Math.max(1, ops) } : {}),
        clientCpu: (results.reduce((n, r) => n + r.cpuMs, 0) * 1000) / Math.max(1, ops),
        errors: loops.reduce((n, w) => n + w.errors, 0),
        idleCmdsPerSec,
        idleClientCmdsPerSec,
        drainMs,
        drainCmdsPerWaiter: total(drainCounts) / workers,
        perWorker: counts.join(' '),
        scriptsSent: breakdown(scripts, Math.max(1, ops)),
        drainSent: breakdown(drainCounts),
      };
    } finally {
      await stopAll(children);
      await holder.teardown();
    }
  },
};
