// 7. Read/write lock across processes: 8 readers and 1 writer, one process each, on one lock.
// The writer increments a counter under the write lock; readers read it twice under the read lock
// and count a change in between (a torn read: the writer got in while they held). Then the same
// processes park behind a held write lock, through the counting proxy: what waiting costs while
// nothing happens, and what the drain costs. ioredisson and its floor (no peer has a read/write lock).
import { allNext, forkWorker, runAllFor, stopAll } from '../lib/children.mjs';
import { idleCost, timedDrain } from '../lib/idle.mjs';
import { breakdown, total } from '../lib/proxy-client.mjs';
import { acquireCalls, addCounts } from '../lib/script-counter.mjs';
import { latency, sleep } from '../lib/stats.mjs';
import { processWarmUpMs } from '../lib/workloads.mjs';

const LOCK = 'bench:rw';
const COUNTER = 'bench:rw-counter';

export default {
  name: 'read-write',
  title: 'Read/write lock across processes',
  takesPart: (adapter) => typeof adapter.setupReadWrite === 'function',
  cases: ({ quick, duration, readers = 8 }) => {
    const ms = duration ?? (quick ? 1_000 : 2_000);
    const idleMs = quick ? 1_000 : 3_000;
    return [{ id: `${readers}r1w`, label: `${readers} readers + 1 writer in ${readers + 1} processes, ${ms / 1000} s; then parked, ${idleMs / 1000} s idle`, readers, ms, idleMs, warmUpMs: processWarmUpMs({ quick }) }];
  },
  columns: [
    { key: 'readsPerSec', label: 'reads/s', better: 'higher', main: true },
    { key: 'writesPerSec', label: 'writes/s' },
    { key: 'lostUpdates', label: 'lost updates' },
    { key: 'tornReads', label: 'torn reads' },
    { key: 'readP50', label: 'read wait p50 ms' },
    { key: 'writeP50', label: 'write wait p50 ms' },
    { key: 'writeP99', label: 'write wait p99 ms' },
    { key: 'acquireCalls', label: 'acquire script calls/op (sent)' },
    { key: 'clientCpu', label: 'client CPU µs/op' },
    { key: 'errors', label: 'errors' },
    { key: 'idleCmdsPerSec', label: 'Redis cmds/s idle (commandstats)' },
    { key: 'idleClientCmdsPerSec', label: 'waiter cmds/s idle (sent)' },
    { key: 'drainMs', label: 'drain ms' },
    { key: 'drainCmdsPerWaiter', label: 'drain cmds/waiter (sent)' },
  ],

  async run(env, adapter, { readers, ms, idleMs, warmUpMs }) {
    const script = new URL('../lib/rw-worker.mjs', import.meta.url);
    const roles = ['writer', ...Array(readers).fill('reader')];
    const children = roles.map((role) => forkWorker(script, [adapter.id, role, env.url, env.proxy.url, LOCK, COUNTER]));
    const holder = await adapter.setupReadWrite({ url: env.url });
    try {
      await allNext(children, 'worker start-up', 20_000);

      // Throughput: every process loops until the same wall-clock time.
      await runAllFor(children, warmUpMs, true);
      const { results, elapsed } = await runAllFor(children, ms);
      const counter = Number((await env.admin.get(COUNTER)) ?? 0);
      const writer = results.find((r) => r.role === 'writer');
      const reads = results.filter((r) => r.role === 'reader');
      const readOps = reads.reduce((n, r) => n + r.ops, 0);
      const scripts = addCounts(results.map((r) => r.scripts));

      // Idle: the parent holds the write lock; every worker parks once, through the proxy.
      const release = await holder.write(LOCK);
      for (const child of children) child.send({ park: true });
      await allNext(children, 'the waiters to park', 15_000);
      await sleep(300);
      const { idleCmdsPerSec, idleClientCmdsPerSec } = await idleCost(env, idleMs);
      const { drainMs, drainCounts } = await timedDrain(env, async () => {
        await release();
        await allNext(children, 'the drain', 15_000);
      });

      return {
        readsPerSec: (readOps / elapsed) * 1000,
        writesPerSec: (writer.ops / elapsed) * 1000,
        lostUpdates: writer.ops - counter,
        tornReads: reads.reduce((n, r) => n + r.torn, 0),
        readP50: latency(reads.flatMap((r) => r.waits)).p50,
        ...Object.fromEntries(Object.entries(latency(writer.waits)).map(([k, v]) => [`write${k.toUpperCase()}`, v])),
        acquireCalls: acquireCalls(scripts) / Math.max(1, readOps + writer.ops),
        clientCpu: (results.reduce((n, r) => n + r.cpuMs, 0) * 1000) / Math.max(1, readOps + writer.ops),
        errors: results.reduce((n, r) => n + r.errors, 0),
        idleCmdsPerSec,
        idleClientCmdsPerSec,
        drainMs,
        drainCmdsPerWaiter: total(drainCounts) / children.length,
        perReader: reads.map((r) => r.ops).join(' '),
        scriptsSent: breakdown(scripts, Math.max(1, readOps + writer.ops)),
        drainSent: breakdown(drainCounts),
      };
    } finally {
      await stopAll(children);
      await holder.teardown();
    }
  },
};
