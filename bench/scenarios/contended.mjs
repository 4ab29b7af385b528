// 2. Contended counter: workers doing read-modify-write of one Redis counter under one lock,
// in one process or in one process each.
import { fork } from 'node:child_process';
import { once } from 'node:events';
import Redis from 'ioredis';
import { track } from '../lib/procs.mjs';
import { breakdown, total } from '../lib/proxy-client.mjs';
import { commandStats, serverCpuMs, statsDelta } from '../lib/redis-info.mjs';
import { acquireCalls, addCounts, countScripts, releaseCalls, takeScriptCounts } from '../lib/script-counter.mjs';
import { latency, withTimeout } from '../lib/stats.mjs';
import { WARM_UP_MS, counterWorker, processWarmUpMs, summarizeWorkers, warmUpLock } from '../lib/workloads.mjs';

const LOCK = 'bench:counter-lock';
const COUNTER = 'bench:counter';
/** How long after the end the last waits may take before the run counts as stalled, ms. */
const GRACE = 8_000;

export default {
  name: 'contended',
  title: 'Contended counter',
  takesPart: (adapter) => adapter.mutex,
  // Across 8 processes a pair's ratio moves by tens of per cent from rep to rep (the fair lock's, in
  // one 10-rep run: 0.64 to 1.44, median 1.08), where 3 reps of it had a median of 0.84.
  floorPairReps: 3,
  cases: ({ quick, workers = 8, duration }) => {
    const ms = duration ?? (quick ? 1_000 : 2_000);
    const warmUpMs = processWarmUpMs({ quick });
    return [
      { id: 'in-process', label: `${workers} workers in one process, ${ms / 1000} s`, workers, ms, processes: false },
      { id: 'processes', label: `${workers} workers in ${workers} processes, ${ms / 1000} s`, workers, ms, warmUpMs, processes: true },
    ];
  },
  columns: [
    { key: 'opsPerSec', label: 'ops/s', better: 'higher', main: true },
    { key: 'lostUpdates', label: 'lost updates' },
    { key: 'fairness', label: 'fairness min/max' },
    { key: 'p50', label: 'wait p50 ms' },
    { key: 'p99', label: 'wait p99 ms' },
    { key: 'errors', label: 'errors' },
    { key: 'commands', label: 'Redis cmds/op (commandstats)' },
    { key: 'scriptCalls', label: 'script calls/op (commandstats)' },
    { key: 'acquireCalls', label: 'acquire script calls/op (sent)' },
    { key: 'retries', label: 'acquire retries/op (sent)' },
    { key: 'subscribes', label: 'SUBSCRIBE/op (commandstats)' },
    { key: 'releaseCalls', label: 'unlock script calls/op (sent)' },
    { key: 'clientCpu', label: 'client CPU µs/op' },
    { key: 'serverCpu', label: 'Redis CPU µs/op' },
  ],

  async run(env, adapter, spec) {
    const runWorkers = spec.processes ? inProcesses : inOneProcess;
    const { results, elapsed, cpuMs, scripts, before } = await runWorkers(env, adapter, spec);
    const serverCpu = (await serverCpuMs(env.admin)) - before.serverCpu;
    const delta = statsDelta(before.commands, await commandStats(env.admin));
    const counter = Number((await env.admin.get(COUNTER)) ?? 0);
    const summary = summarizeWorkers(results, elapsed, counter);
    // Per counted update; start-up and teardown add a little (script loading, the counter's GET).
    const ops = Math.max(counter, 1);
    return {
      opsPerSec: summary.opsPerSec,
      lostUpdates: summary.lostUpdates,
      fairness: summary.fairness,
      ...latency(summary.waits),
      errors: summary.errors,
      commands: total(delta) / ops,
      scriptCalls: ((delta.evalsha ?? 0) + (delta.eval ?? 0)) / ops,
      // ioredisson's own scripts, by name, as its workers sent them: an update is one unlock script
      // call, and every acquire script call beyond one per update is a wasted attempt.
      // Retries: the attempts of an acquisition after its first (the wake-ups that had to try again).
      ...(adapter.pkg === 'ioredisson' || adapter.floorOf // a floor runs the same scripts
        ? {
            acquireCalls: acquireCalls(scripts) / ops,
            retries: (acquireCalls(scripts) - summary.total) / ops,
            releaseCalls: releaseCalls(scripts) / ops,
          }
        : {}),
      subscribes: (delta.subscribe ?? 0) / ops,
      clientCpu: (cpuMs * 1000) / ops,
      serverCpu: (serverCpu * 1000) / ops,
      perWorker: summary.counts.join(' '),
      commandsDetail: breakdown(delta, ops),
      scriptsSent: breakdown(scripts, ops),
    };
  },
};

/** Redis' command counts and CPU before the timed part of a run (after set-up and warm-up). */
async function redisBefore(env) {
  return { commands: await commandStats(env.admin), serverCpu: await serverCpuMs(env.admin) };
}

async function inOneProcess(env, adapter, { workers, ms }) {
  const lib = await adapter.setup({ url: env.url });
  const redis = new Redis(env.url);
  try {
    const contend = (keys, until) =>
      Promise.all(Array.from({ length: workers }, () => counterWorker(lib, redis, { ...keys, until })));
    await withTimeout(contend(warmUpLock(LOCK, COUNTER), Date.now() + WARM_UP_MS), WARM_UP_MS + GRACE, 'the warm-up');
    const before = await redisBefore(env);
    const start = performance.now();
    const cpuBefore = process.cpuUsage();
    countScripts();
    const all = contend({ lockKey: LOCK, counterKey: COUNTER }, Date.now() + ms);
    const results = await withTimeout(all, ms + GRACE, 'the last waits (wake-up missed?)');
    const scripts = takeScriptCounts();
    const cpu = process.cpuUsage(cpuBefore);
    return { results, elapsed: performance.now() - start, cpuMs: (cpu.user + cpu.system) / 1000, scripts, before };
  } finally {
    await lib.teardown();
    redis.disconnect();
  }
}

async function inProcesses(env, adapter, { workers, ms, warmUpMs }) {
  const script = new URL('../lib/contender.mjs', import.meta.url);
  const children = Array.from({ length: workers }, () =>
    track(fork(script, [adapter.id, env.url, LOCK, COUNTER], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })),
  );
  try {
    const allSaid = () => Promise.all(children.map((c) => once(c, 'message')));
    await withTimeout(allSaid(), 20_000, 'contender start-up');
    const warmed = allSaid();
    for (const child of children) child.send({ warmUntil: Date.now() + warmUpMs });
    await withTimeout(warmed, warmUpMs + GRACE, 'the warm-up');
    const before = await redisBefore(env);
    const start = performance.now();
    const until = Date.now() + ms;
    const done = children.map((c) => once(c, 'message').then(([msg]) => msg.result));
    for (const child of children) child.send({ until });
    const results = await withTimeout(Promise.all(done), ms + GRACE, 'the last waits (wake-up missed?)');
    const cpuMs = results.reduce((sum, r) => sum + r.cpuMs, 0);
    return { results, elapsed: performance.now() - start, cpuMs, scripts: addCounts(results.map((r) => r.scripts)), before };
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  }
}
