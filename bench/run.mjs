// Benchmark runner: `npm run bench -- [options]`; see --help.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import Redis from 'ioredis';
import { loadAdapters } from './lib/adapters.mjs';
import { killAll } from './lib/procs.mjs';
import { startProxy } from './lib/proxy-client.mjs';
import { startRedis } from './lib/redis-server.mjs';
import { writeResults } from './lib/report.mjs';
import { median, withTimeout } from './lib/stats.mjs';

const SCENARIOS = ['uncontended', 'contended', 'handoff', 'idle-waiters', 'many-waiters', 'many-locks', 'client-cpu', 'redlock', 'read-write', 'semaphore', 'latch', 'many-values'];
/** Scaling curves (issue 23, item 4): minutes each, so only when named with --scenario. */
const OPTIONAL = ['renewal', 'waiter-scaling', 'cluster-slots'];

const HELP = `Usage: npm run bench -- [options]
  --scenario a,b     scenarios to run (${SCENARIOS.join(', ')}); default all;
                     the scaling curves only when named: ${OPTIONAL.join(', ')}
  --adapters a,b     adapters to run (file names in bench/adapters/); default all
  --reps N           repetitions of every case (default 3; --quick: 1)
  --quick            short smoke run (~1 min)
  --cycles N         uncontended cycles per rep
  --workers N        contended workers (default 8)
  --duration MS      contended, many-locks, read-write, semaphore and many-values run time per rep
  --samples N        hand-off samples per rep; latch rounds per rep (default 30; --quick: 10)
  --waiters a,b      idle waiter counts (default 100,1000); the first is also the latch's waiters (default 100)
  --many-waiters N   waiters of the many-waiters case (default 10000)
  --many-locks N     locks of the many-waiters case (default 1000)
  --scaling-locks a,b   held locks of the renewal curve (default 1000,10000,100000), and the lock
                        counts waiter-scaling draws a curve over (default 1000,10000)
  --scaling-waiters a,b waiters of each waiter-scaling curve (default 1000,10000,100000)
  --watchdog MS      the renewal curve's lockWatchdogTimeout (default 10000: a round every 3.3 s)
  --latency MS       the renewal curve's clients connect through the proxy, which holds each reply back MS
  --scaling-slots a,b   distinct Cluster slots cluster-slots spreads its 4096 lock names over
                        (default 1,16,256,4096), on a 3-primary cluster it starts
  --out DIR          results folder (default bench/results for a full default run, else bench/results/tmp)
Uses REDIS_URL if set, else starts a throwaway redis-server on a free loopback port.`;

const { values: args } = parseArgs({
  options: {
    scenario: { type: 'string' },
    adapters: { type: 'string' },
    reps: { type: 'string' },
    quick: { type: 'boolean', default: false },
    cycles: { type: 'string' },
    workers: { type: 'string' },
    duration: { type: 'string' },
    samples: { type: 'string' },
    waiters: { type: 'string' },
    'many-waiters': { type: 'string' },
    'many-locks': { type: 'string' },
    'scaling-locks': { type: 'string' },
    'scaling-waiters': { type: 'string' },
    watchdog: { type: 'string' },
    latency: { type: 'string' },
    'scaling-slots': { type: 'string' },
    out: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (args.help) {
  console.log(HELP);
  process.exit(0);
}

const list = (s) => (s ? s.split(',').map((x) => x.trim()).filter(Boolean) : []);
const num = (s) => (s === undefined ? undefined : Number(s));
const opts = {
  quick: args.quick,
  cycles: num(args.cycles),
  workers: num(args.workers),
  duration: num(args.duration),
  samples: num(args.samples),
  waiters: args.waiters ? list(args.waiters).map(Number) : undefined,
  manyWaiters: num(args['many-waiters']),
  manyLocks: num(args['many-locks']),
  scalingLocks: args['scaling-locks'] ? list(args['scaling-locks']).map(Number) : undefined,
  scalingWaiters: args['scaling-waiters'] ? list(args['scaling-waiters']).map(Number) : undefined,
  watchdog: num(args.watchdog),
  latency: num(args.latency),
  scalingSlots: args['scaling-slots'] ? list(args['scaling-slots']).map(Number) : undefined,
};
const reps = num(args.reps) ?? (args.quick ? 1 : 3);
const scenarioNames = list(args.scenario).length ? list(args.scenario) : SCENARIOS;
for (const s of scenarioNames) if (!SCENARIOS.includes(s) && !OPTIONAL.includes(s)) throw new Error(`unknown scenario ${s}`);
const isFullRun = !args.quick && !args.scenario && !args.adapters && reps >= 3 && Object.values(opts).every((v) => v === undefined || v === false);
const outDir = args.out ? pathToFileURL(`${resolve(args.out)}/`) : new URL(isFullRun ? './results/' : './results/tmp/', import.meta.url);

let unhandled = 0;
process.on('unhandledRejection', (error) => {
  // Peers torn down with waits still pending may reject later; note it and keep going.
  if (unhandled++ < 5) console.error(`  (late rejection: ${error?.message ?? error})`);
});

const log = (msg) => process.stderr.write(`${msg}\n`);
const started = Date.now();
const adapters = await loadAdapters(list(args.adapters));
for (const a of adapters.filter((a) => a.error)) log(`! ${a.name}: ${a.error}`);

let server;
let proxy;
let admin;
try {
  server = process.env.REDIS_URL ? { url: process.env.REDIS_URL, stop: async () => {} } : await startRedis();
  admin = new Redis(server.url);
  proxy = await startProxy(server.url);
  const env = { url: server.url, admin, proxy };
  const redisVersion = (await admin.info('server')).match(/redis_version:(\S+)/)[1];
  log(`Redis ${redisVersion} at ${server.url}; ${reps} rep(s)${args.quick ? ', quick' : ''}; results to ${outDir.pathname}`);

  const cases = [];
  for (const scenarioName of scenarioNames) {
    const scenario = (await import(`./scenarios/${scenarioName}.mjs`)).default;
    for (const spec of scenario.cases(opts)) cases.push({ scenario, spec, runners: adapters.filter((a) => !a.error && scenario.takesPart(a, spec)), runs: {} });
  }
  const total = cases.reduce((n, c) => n + c.runners.length * repsOf(c) + floorPairs(c).length * (pairRepsOf(c) - repsOf(c)), 0);
  let step = 0;
  for (const c of cases) {
    const caseReps = pairRepsOf(c);
    for (let rep = 0; rep < caseReps; rep++) {
      for (const adapter of repOrder(runnersOf(c, rep), rep)) {
        step += 1;
        if (c.runs[adapter.id]?.some((r) => r.error)) continue; // failed once: not repeated, to bound the run time
        const prefix = `[${step}/${total}] ${c.scenario.name} ${c.spec.id} · rep ${rep + 1}/${caseReps} · ${adapter.name}`;
        process.stderr.write(`${prefix} …`);
        await admin.flushall();
        const t = performance.now();
        let result;
        try {
          result = await withTimeout(c.scenario.run(env, adapter, c.spec), 240_000, `${adapter.name} ${c.scenario.name}`);
        } catch (error) {
          result = { error: error.message.split('\n')[0] };
        }
        (c.runs[adapter.id] ??= []).push(result);
        const main = c.scenario.columns.find((col) => col.main).key;
        const shown = result.error ? `ERROR ${result.error}` : `${main} ${fmt(result[main])}`;
        process.stderr.write(`\r${prefix} → ${shown} (${((performance.now() - t) / 1000).toFixed(1)} s)\n`);
      }
    }
  }

  const results = {
    startedAt: new Date(started).toISOString(),
    durationS: Math.round((Date.now() - started) / 1000),
    options: { reps, ...opts },
    fullRun: isFullRun,
    redisVersion,
    adapters: adapters.map(({ id, name, pkg, version, waiting, floor, floorOf, variantOf, error }) => ({ id, name, pkg, version, waiting, floor, floorOf, variantOf, error })),
    cases: cases.map(summarize),
  };
  const files = await writeResults(results, outDir, isFullRun);
  log(`done in ${results.durationS} s; wrote ${files.join(', ')}`);
} finally {
  await admin?.quit().catch(() => undefined);
  proxy?.stop();
  await server?.stop();
  killAll();
}
process.exit(0); // peers may leave timers (watchdogs, wait timeouts) behind

/** A case's reps: a scenario whose ratios matter most may split each rep into shorter ones, for more pairs, each closer in time. */
function repsOf(c) {
  return reps * (c.scenario.splitReps ?? 1);
}

/**
 * A case's reps with its floor pairs repeated: a scenario whose pairs vary too much from rep to rep
 * for a few to decide a 5 % target (`floorPairReps`) runs each library adapter and its floor that
 * many times as often; the other adapters run {@link repsOf} times.
 */
function pairRepsOf(c) {
  return repsOf(c) * (c.scenario.floorPairReps ?? 1);
}

/** The adapters of case `c` that are a library adapter or its floor, both taking part. */
function floorPairs(c) {
  return c.runners.filter((adapter) => c.runners.some((other) => other.floorOf === adapter.id || adapter.floorOf === other.id));
}

/** The adapters that run in rep `rep` of case `c`: all of them, then only its floor pairs. */
function runnersOf(c, rep) {
  return rep < repsOf(c) ? c.runners : floorPairs(c);
}

/**
 * The order of the runners in one rep: rotated each rep, so that no adapter always runs first (or
 * right after a heavy one), with each floor beside the adapter it divides, one and then the other
 * first, so that each "÷ floor" ratio divides two runs made one right after the other.
 */
function repOrder(runners, rep) {
  const units = [];
  for (const adapter of runners) {
    if (runners.some((other) => adapter.floorOf === other.id)) continue; // placed with its library adapter
    const floor = runners.find((other) => other.floorOf === adapter.id);
    units.push(!floor ? [adapter] : rep % 2 ? [floor, adapter] : [adapter, floor]);
  }
  return units.flatMap((_, i) => units[(i + rep) % units.length]);
}

/** Medians per metric, and main-metric ratios paired within each rep (÷ floor: against the floor of the same kind in this case). */
function summarize(c) {
  const { scenario, spec, runners, runs } = c;
  const main = scenario.columns.find((col) => col.main);
  const rows = runners.map((adapter) => {
    const floor = runners.find((a) => a.floorOf === adapter.id);
    const reps = runs[adapter.id] ?? [];
    const ok = reps.filter((r) => !r.error);
    const medians = {};
    for (const key of Object.keys(ok[0] ?? {})) {
      const values = ok.map((r) => r[key]);
      medians[key] = typeof values[0] === 'number' ? median(values) : values.at(-1);
    }
    const pairRatio = (other) =>
      median(reps.map((r, i) => (r.error || runs[other]?.[i]?.error ? NaN : r[main.key] / runs[other]?.[i]?.[main.key])));
    return {
      adapter: adapter.id,
      name: adapter.name,
      medians,
      values: Object.fromEntries(Object.keys(medians).map((k) => [k, ok.map((r) => r[k])])),
      errors: reps.filter((r) => r.error).map((r) => r.error),
      vsRaw: runs.raw ? pairRatio('raw') : NaN,
      vsIoredisson: runs.ioredisson ? pairRatio('ioredisson') : NaN,
      vsFloor: floor && runs[floor.id] ? pairRatio(floor.id) : NaN,
    };
  });
  return {
    scenario: scenario.name,
    case: spec.id,
    reps: repsOf(c),
    ...(scenario.floorPairReps && { floorPairReps: pairRepsOf(c) }),
    title: `${scenario.title}: ${spec.label}`,
    ...(spec.curve && { curve: spec.curve, x: spec.x }),
    columns: scenario.columns,
    rows,
  };
}

function fmt(v) {
  if (typeof v !== 'number') return String(v);
  return Math.abs(v) >= 100 ? v.toFixed(0) : v.toPrecision(3);
}
