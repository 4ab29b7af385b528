// Turns the run's results into latest.json, latest.md, latest.svg and the section docs/benchmarks.md quotes.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { packageVersion } from './adapters.mjs';
import { median } from './stats.mjs';
import { barChart } from './svg.mjs';
import { WARM_UP_MS, processWarmUpMs } from './workloads.mjs';

const IO = 'ioredisson';
// The README is also the npm registry page, where relative links break: link the repository.
const REPO_FILES = 'https://github.com/ioredisson/ioredisson';
const REPO_RAW = 'https://raw.githubusercontent.com/ioredisson/ioredisson';
/** The fair lock's adapter. */
const FAIR = 'ioredisson-fair';

function fmt(v) {
  if (v === undefined || v === null) return '–';
  if (typeof v !== 'number') return String(v);
  if (!Number.isFinite(v)) return '–';
  if (Number.isInteger(v) && Math.abs(v) < 1e6) return v.toLocaleString('en-US');
  if (Math.abs(v) >= 1000) return Math.round(v).toLocaleString('en-US');
  if (Math.abs(v) >= 100) return v.toFixed(0);
  if (Math.abs(v) >= 10) return v.toFixed(1);
  if (Math.abs(v) >= 0.01) return v.toFixed(2);
  return v === 0 ? '0' : v.toPrecision(2);
}
const times = (v) => (Number.isFinite(v) ? `${fmt(v)}×` : '–');

async function machine(redisVersion) {
  const cpuinfo = await readFile('/proc/cpuinfo', 'utf8').catch(() => '');
  return {
    cores: os.availableParallelism?.() ?? os.cpus().length,
    cpu: cpuinfo.match(/^model name\s*:\s*(.+)$/m)?.[1] ?? os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    redis: redisVersion,
    ioredis: await packageVersion('ioredis').catch(() => '?'),
    redisClient: await packageVersion('redis').catch(() => '?'),
    commit: COMMIT_MEASURED,
  };
}

/** The library's commit, marked `+local changes` when lib/ or lua/ differ from it. */
function gitCommit() {
  try {
    const git = (...args) => execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return `${git('rev-parse', '--short', 'HEAD')}${git('status', '--porcelain', 'lib', 'lua') ? '+local changes' : ''}`;
  } catch {
    return 'unknown';
  }
}

/** The commit measured: read as the run starts, right after `npm run bench` built it (edits made while it runs are not measured). */
const COMMIT_MEASURED = gitCommit();

const findCase = (results, scenario, id) => results.cases.find((c) => c.scenario === scenario && (id === undefined || c.case === id));
const rowOf = (c, adapter) => c?.rows.find((r) => r.adapter === adapter && Object.keys(r.medians).length);

/** Each target of the issue, with the figure that decides it; `met` is null when not measured. */
export function evaluateTargets(results) {
  const targets = [];
  // `why`: what the profiling of this issue found behind a miss, with this run's figures where it has them.
  const add = (text, met, figure, why = '') => targets.push({ text, met: met ?? null, figure, why });
  const polling = results.adapters.filter((a) => a.waiting?.startsWith('polls')).map((a) => a.id);
  // Floors and the library's own variants are no peers.
  const floors = results.adapters.filter((a) => a.floor || a.variantOf).map((a) => a.id);

  const un = findCase(results, 'uncontended');
  const unIo = rowOf(un, IO);
  if (unIo) {
    const { lockTrips, unlockTrips } = unIo.medians;
    add('Uncontended: 1 round trip per lock and 1 per unlock', lockTrips <= 1.3 && unlockTrips <= 1.3,
      `lock ${fmt(lockTrips)}, unlock ${fmt(unlockTrips)} round trips; ${unIo.medians.clientCommandsDetail} sent per cycle`);
    add('Uncontended: cycle rate ≥ 0.9× raw baseline', unIo.vsRaw >= 0.9, `${times(unIo.vsRaw)} raw (${fmt(unIo.medians.cyclesPerSec)} cycles/s)`,
      `Both are bound by round trips; on top of them each cycle runs Redisson's two Lua scripts (${fmt(unIo.medians.commands)} Redis calls against raw's ` +
        `${fmt(rowOf(un, 'raw')?.medians.commands)}) and the lock's own JavaScript (owner, lease tracking, handle).`);
  }

  const ho = findCase(results, 'handoff');
  const hoIo = rowOf(ho, IO);
  if (hoIo) {
    const pubsubPeers = ho.rows.filter((r) => r.adapter !== IO && !polling.includes(r.adapter) && r.adapter !== 'ping' && !floors.includes(r.adapter) && r.medians.fromCallP50 !== undefined);
    const slowestWins = pubsubPeers.every((r) => hoIo.medians.fromCallP50 <= r.medians.fromCallP50);
    add('Hand-off p50 from the unlock call ≤ every other pub/sub peer\'s', pubsubPeers.length ? slowestWins : null,
      `${fmt(hoIo.medians.fromCallP50)} ms; ${pubsubPeers.map((r) => `${r.name} ${fmt(r.medians.fromCallP50)} ms`).join(', ') || 'no pub/sub peer measured'}`);
    const pollers = ho.rows.filter((r) => polling.includes(r.adapter) && r.adapter !== 'raw' && Number.isFinite(r.vsIoredisson));
    if (pollers.length) {
      const best = pollers.reduce((a, b) => (a.vsIoredisson < b.vsIoredisson ? a : b));
      add('Hand-off p50 ≥ 8× faster than the best poller at its defaults', best.vsIoredisson >= 8,
        pollers.map((r) => `${r.name} ${times(r.vsIoredisson)}`).join(', '), 'Follows the hand-off p50, which varies most from run to run.');
    }
  }

  const idle = findCase(results, 'idle-waiters', '100');
  const idleIo = rowOf(idle, IO);
  if (idleIo) {
    const m = idleIo.medians;
    add('Idle waiting: 0 commands/s from waiters, ~0 CPU', m.clientCmdsPerSec === 0 && m.cpuPct < 1,
      `${fmt(m.clientCmdsPerSec)} cmds/s sent by waiters, ${fmt(m.cmdsPerSec)} Redis cmds/s in all, ${fmt(m.cpuPct)} % CPU (100 waiters)`);
    // The last waiter's UNSUBSCRIBE is shared by all: 3 + 1/100 still rounds to 3 per waiter.
    add('Draining 100 waiters: ≤ 3 commands per waiter', Math.round(m.drainCmdsPerWaiter * 10) / 10 <= 3,
      `${fmt(m.drainCmdsPerWaiter)} sent per waiter (in all: ${m.drainSent}); ${fmt(m.drainRedisCmdsPerWaiter)} incl. script-internal calls`);
  }

  const cpu = (row) => `${fmt(row.medians.clientCpu)} µs client and ${fmt(row.medians.serverCpu)} µs Redis CPU`;
  const bestPeer = (c) => c.rows
    .filter((r) => !r.adapter.startsWith(IO) && !floors.includes(r.adapter) && Object.keys(r.medians).length)
    .reduce((a, b) => ((a?.medians.opsPerSec ?? -1) > b.medians.opsPerSec ? a : b), undefined);

  const inProcess = findCase(results, 'contended', 'in-process');
  const io = rowOf(inProcess, IO);
  if (io) {
    const best = bestPeer(inProcess);
    add('Contended (in-process): throughput ≥ every peer\'s', best ? io.medians.opsPerSec >= best.medians.opsPerSec : null,
      `${fmt(io.medians.opsPerSec)} ops/s; best other: ${best ? `${best.name} ${fmt(best.medians.opsPerSec)}` : 'none'}`,
      'Each update takes three round trips (the next waiter\'s acquire goes out right behind the unlock) against a ' +
        `re-acquiring poller's four, but runs Redisson's scripts (${fmt(io.medians.commands)} Redis calls per update): ${cpu(io)} ` +
        `per update${best ? ` against ${best.name}'s ${cpu(best)}` : ''}.`);
    const lost = Math.max(...io.values.lostUpdates);
    const fair = Math.min(...io.values.fairness);
    add('Contended (in-process): 0 lost updates, min/max per worker ≥ 0.5', lost === 0 && fair >= 0.5,
      `${lost} lost (worst rep), fairness ${fmt(fair)} (worst rep), ${fmt(io.medians.fairness)} median`);
  }

  // Across processes RLock wakes one waiter in every process, as Redisson's does; the fair lock wakes
  // exactly the next one, so the eight-process targets are the fair lock's.
  const processes = findCase(results, 'contended', 'processes');
  const fairIo = rowOf(processes, FAIR);
  if (fairIo) {
    const best = bestPeer(processes);
    const fifoFloor = rowOf(processes, 'fifo-floor');
    add('Fair lock, 8 processes: throughput ≥ every peer\'s', best ? fairIo.medians.opsPerSec >= best.medians.opsPerSec : null,
      `${fmt(fairIo.medians.opsPerSec)} ops/s; best other: ${best ? `${best.name} ${fmt(best.medians.opsPerSec)}` : 'none'}; ` +
        `RLock ${fmt(rowOf(processes, IO)?.medians.opsPerSec)}`,
      `Each update takes ${fmt(fairIo.medians.acquireCalls)} acquire script calls and ${fmt(fairIo.medians.subscribes)} SUBSCRIBE (as many UNSUBSCRIBE) of the waiter's own channel: ` +
        `${cpu(fairIo)} per update${best ? ` against ${best.name}'s ${cpu(best)}` : ''}.` +
        (fifoFloor ? ` The FIFO floor (bare ioredis, a queue and one channel per process subscribed once, no lease, latch or purge) reaches ` +
          `${fmt(fifoFloor.medians.opsPerSec)} ops/s with ${cpu(fifoFloor)} per update: every update of a first-come, first-served lock ` +
          'hands the lock to another process, where a poller\'s holder takes it again in its own.' : ''));
    const lost = Math.max(...fairIo.values.lostUpdates);
    const fair = Math.min(...fairIo.values.fairness);
    add('Fair lock, 8 processes: 0 lost updates, min/max per worker ≥ 0.9', lost === 0 && fair >= 0.9,
      `${lost} lost (worst rep), fairness ${fmt(fair)} (worst rep), ${fmt(fairIo.medians.fairness)} median`);
    // Acquire script calls the workers sent, counted by script; an update is one unlock script call.
    const { acquireCalls, retries, releaseCalls, scriptCalls } = fairIo.medians;
    const attempts = acquireCalls ?? scriptCalls - 1;
    // No unlock counted means the counter did not recognise the scripts: not measured, not met.
    add('Fair lock, 8 processes: ≤ 1.2 acquire attempts per update', releaseCalls === 0 ? null : attempts <= 1.2,
      `${fmt(attempts)} acquire script calls per update (${fmt(retries)} after an acquisition's first), ${fmt(releaseCalls)} unlock calls; ` +
        `${fmt(scriptCalls)} script calls per update in all (commandstats)`,
      'Under contention Redisson\'s protocol needs two attempts per update: one joins the queue, and the one the release ' +
        'message starts takes the lock (the unlock script publishes to the head; it does not hand the lock over, which ' +
        'Java waiters would not understand). A waiter whose channel was not subscribed yet makes a third, once subscribed, ' +
        'so as not to miss a release; a worker that keeps its owner finds its channel still subscribed and skips it.');
  }
  const hoFair = rowOf(findCase(results, 'handoff'), FAIR);
  const hoRLock = rowOf(findCase(results, 'handoff'), IO);
  if (hoFair && hoRLock) {
    // The ratio is the median of per-rep pairs, so both sides of each pair ran under the same load.
    add('Fair lock hand-off p50 within 1.2× RLock\'s', hoFair.vsIoredisson <= 1.2,
      `${times(hoFair.vsIoredisson)} RLock's (medians ${fmt(hoFair.medians.p50)} ms against ${fmt(hoRLock.medians.p50)} ms)`);
  }
  const idleFair = rowOf(findCase(results, 'idle-waiters', '100'), FAIR);
  if (idleFair) {
    add('Fair lock idle waiting: 0 commands/s from waiters', idleFair.medians.clientCmdsPerSec === 0,
      `${fmt(idleFair.medians.clientCmdsPerSec)} cmds/s sent by 100 idle fair waiters`);
  }

  const rwCase = findCase(results, 'read-write');
  const rw = rowOf(rwCase, IO);
  if (rw) {
    const lost = Math.max(...rw.values.lostUpdates);
    const torn = Math.max(...rw.values.tornReads);
    add('Read/write, 8 readers + 1 writer across processes: no lost update, no reader sees a write while it holds', lost === 0 && torn === 0,
      `${lost} lost, ${torn} torn reads (worst rep); ${fmt(rw.medians.readsPerSec)} reads/s, ${fmt(rw.medians.writesPerSec)} writes/s ` +
        `(write wait p50 ${fmt(rw.medians.writeP50)} ms)`);
    add('Read/write: 0 commands/s from parked readers and writer', rw.medians.idleClientCmdsPerSec === 0 && rw.medians.idleCmdsPerSec === 0,
      `${fmt(rw.medians.idleClientCmdsPerSec)} cmds/s sent by the parked waiters, ${fmt(rw.medians.idleCmdsPerSec)} Redis cmds/s in all; ` +
        `drained in ${fmt(rw.medians.drainMs)} ms, ${fmt(rw.medians.drainCmdsPerWaiter)} cmds per waiter`);
  }

  const semCase = findCase(results, 'semaphore');
  const sem = rowOf(semCase, IO);
  if (sem) {
    const rs = rowOf(semCase, 'redis-semaphore');
    // vsIoredisson is the peer's rate over ioredisson's, paired per rep: at or above it means <= 1.
    add('Semaphore (3 permits, 10 workers in 3 processes): throughput ≥ redis-semaphore\'s Semaphore', rs ? rs.vsIoredisson <= 1 : null,
      rs ? `${times(1 / rs.vsIoredisson)} redis-semaphore (${fmt(sem.medians.opsPerSec)} against ${fmt(rs.medians.opsPerSec)} ops/s)` : `${fmt(sem.medians.opsPerSec)} ops/s; redis-semaphore not measured`,
      `Most releases carry the attempt of the next worker parked in their own process in the same script, which takes its permit only if the count covers it and publishes nothing when it took all; a release left to its message (the 33rd in a row, or one with nobody parked) publishes the count, and every process tries for it, ` +
        `${fmt(sem.medians.acquireCalls)} acquire script calls per permit in all (${sem.medians.scriptsSent}): ` +
        `${fmt(sem.medians.clientCpu)} µs client CPU per permit${rs ? ` against redis-semaphore's ${fmt(rs.medians.clientCpu)} µs` : ''}.`);
    const peak = Math.max(...sem.values.peakHolders);
    add('… never more than 3 holders at once', peak <= 3, `peak ${peak} holders (worst rep)`);
    add('… 0 Redis commands/s from idle waiters', sem.medians.idleCmdsPerSec === 0 && sem.medians.idleClientCmdsPerSec === 0,
      `${fmt(sem.medians.idleClientCmdsPerSec)} cmds/s sent by 10 parked waiters, ${fmt(sem.medians.idleCmdsPerSec)} Redis cmds/s in all` +
        (rs ? `; redis-semaphore ${fmt(rs.medians.idleCmdsPerSec)}` : ''));
    add('… drain: ≤ 3 client commands per waiter', Math.round(sem.medians.drainCmdsPerWaiter * 10) / 10 <= 3,
      `${fmt(sem.medians.drainCmdsPerWaiter)} sent per waiter (${sem.medians.drainSent}), drained in ${fmt(sem.medians.drainMs)} ms`,
      'Every release message reaches all three processes; each sends one script for the waiters it wakes (as many as permits are free), and a release by a process with waiters parked carries their attempts in its own script.');
  }

  const latchCase = findCase(results, 'latch');
  const latch = rowOf(latchCase, IO);
  if (latch) {
    const ho = rowOf(findCase(results, 'handoff'), IO);
    const m = latch.medians;
    add(`Latch: ${latchCase.case} waiters all released within one RLock hand-off (p50) of the last count-down`, ho ? m.lastP50 <= ho.medians.p50 : null,
      `${fmt(m.lastP50)} ms until the last returns (first ${fmt(m.firstP50)} ms)` + (ho ? ` against a hand-off p50 of ${fmt(ho.medians.p50)} ms` : '; hand-off not measured in this run'),
      `The client's waits are one waiter of the wait loop: the release message wakes it once, and one GET re-checks the count for all of them (${fmt(m.drainCmdsPerWaiter)} commands per waiter). ` +
        `The first returns ${fmt(m.firstP50)} ms after the count-down and the last ${fmt(m.lastP50)} ms: the message's delivery to a process that was idle ` +
        'plus that one round trip, the same path as a hand-off (a message, then one command), not the spread over the waiters.');
    add('Latch: 0 commands/s from idle waiters', m.idleCmdsPerSec === 0 && m.idleClientCmdsPerSec === 0,
      `${fmt(m.idleClientCmdsPerSec)} cmds/s sent by ${latchCase.case} waiters, ${fmt(m.idleCmdsPerSec)} Redis cmds/s in all`);
  }

  const ml = rowOf(findCase(results, 'many-locks'), IO);
  if (ml) {
    add('Many locks (50 workers, 1 000 keys): ≥ 0.9× raw ops/s', ml.vsRaw >= 0.9, `${times(ml.vsRaw)} raw (${fmt(ml.medians.opsPerSec)} ops/s)`,
      'Bound by the client\'s CPU: per cycle the lock\'s own JavaScript and two script calls against raw\'s SET and one script call.');
  }

  const rl = findCase(results, 'redlock', 'uncontended-5');
  const rlIo = rowOf(rl, IO);
  if (rlIo) {
    const peers = rl.rows.filter((r) => r.adapter !== IO && !floors.includes(r.adapter) && Number.isFinite(r.vsIoredisson));
    // vsIoredisson is the peer's rate over ioredisson's: at or above a peer means a ratio <= 1.
    add('RedLock, 5 servers, uncontended: cycle rate at or above both Redlock peers', peers.length === 2 && peers.every((r) => r.vsIoredisson <= 1),
      `${fmt(rlIo.medians.main)} cycles/s; ` + peers.map((r) => `${times(1 / r.vsIoredisson)} ${r.name} (${fmt(r.medians.main)})`).join(', '),
      'Each member runs Redisson\'s acquire and unlock scripts plus the unlock latch clean-up, against one SET and one script per server.');
  }
  const mlIdle = rowOf(findCase(results, 'redlock', 'multilock-idle'), IO);
  if (mlIdle) {
    add('MultiLock over 3 keys, contended: 0 Redis commands/s while waiters idle', mlIdle.medians.main === 0, `${fmt(mlIdle.medians.main)} cmds/s`,
      'A waiter re-checks when its round (1500 ms per member) ends or the holder\'s TTL passes.');
  }

  const group = rowOf(findCase(results, 'many-values', 'group'), IO);
  const members = rowOf(findCase(results, 'many-values', 'multilock'), IO);
  if (group && members) {
    const [g, m] = [group.medians, members.medians];
    add('Locking 100 values: the group multi-lock faster than getMultiLock(...100 RLocks)', g.cyclesPerSec > m.cyclesPerSec,
      `${fmt(g.cyclesPerSec)} against ${fmt(m.cyclesPerSec)} cycles/s (${times(g.cyclesPerSec / m.cyclesPerSec)}); ${fmt(g.sent)} against ${fmt(m.sent)} commands sent per cycle`,
      'The group lock does the 100 values\' work inside Redis, one script call each way; the MultiLock pays a round trip per member and per direction.');
  }

  const renewal = rowOf(findCase(results, 'renewal', '100000'), IO);
  if (renewal) {
    const m = renewal.medians;
    add('Renewing 100 000 held locks: Redis CPU ≤ 1.1× the renewal script alone\'s', m.redisCpuRatio <= 1.1,
      `${times(m.redisCpuRatio)} per lock renewed (median of per-rep ratios); ${fmt(m.redisCpuPerSec)} against ${fmt(m.scriptRedisCpuPerSec)} ms/s`);
  }
  const renewalRows = results.cases.filter((c) => c.scenario === 'renewal').map((c) => rowOf(c, IO)).filter(Boolean);
  if (renewalRows.length) {
    const outside = Math.max(...renewalRows.map((r) => r.medians.outsidePerLockRound));
    add('Renewal: no per-lock command outside the batch', outside === 0,
      `${fmt(outside)} calls outside renew.lua per lock per round (most of any case); ${fmt(renewalRows[0].medians.locksPerScriptCall)} locks per script call`);
  }
  const curves = scalingCurves(results);
  if (curves.length) {
    const bent = curves.filter((c) => !c.linear);
    add('Every scaling curve linear', bent.length === 0, `${curves.length - bent.length} of ${curves.length} linear` +
      (bent.length ? `; not: ${bent.map((c) => `${c.title} (R² ${fmt(c.r2)}, marginal cost ${times(c.growth)})`).join(', ')}` : ''));
  }

  const pairs = floorPairs(results);
  if (pairs.length) {
    // The issue's bound: at least 0.95x the floor's throughput, at most 1.05x its latency.
    const within = ({ main, r }) => (main.better === 'higher' ? r.vsFloor >= 0.95 : r.vsFloor <= 1.05);
    const missed = pairs.filter((p) => !within(p));
    add('Every kind within 5 % of its floor: ≥ 0.95× its throughput, ≤ 1.05× its latency', missed.length === 0,
      `${pairs.length - missed.length} of ${pairs.length} cases` +
        (missed.length ? `; not: ${missed.map(({ c, r }) => `${r.name}, ${c.scenario} ${c.case} ${times(r.vsFloor)}`).join('; ')}` : ''),
      'Each pair sends about the same commands per operation (the tables above). ' + redLockSplit(results) +
        'Across 8 processes a pair\'s ratio moves by tens of per cent from rep to rep (the fair lock\'s over 10 reps: ' +
        '0.64-1.44, median 1.08), hence 9 reps of each pair there.');
  }

  const cpuRows = ['rlock', 'fair-lock', 'semaphore'].map((id) => [id, rowOf(findCase(results, 'client-cpu', id), IO)]).filter(([, row]) => row);
  if (cpuRows.length) {
    add('Client CPU per operation ≤ 1.1× the floor\'s (RLock, fair lock, semaphore)', cpuRows.every(([, row]) => row.medians.cpuRatio <= 1.1),
      cpuRows.map(([id, row]) => `${id} ${times(row.medians.cpuRatio)} (${fmt(row.medians.libraryCpu)} against ${fmt(row.medians.floorCpu)} µs/op)`).join(', '),
      `${cpuRows.filter(([, row]) => row.medians.cpuRatio > 1.1).map(([id]) => id).join(', ')}: both sides send the same commands, ` +
        'write them to the socket as often and make about as many promises per operation; the library\'s extra CPU is the rest of its ' +
        'JavaScript per operation (checking the call, the acquisition\'s state machine, the handle and grant objects, the replica-sync ' +
        'check of each write), spread over many small steps: a profile finds no single step worth cutting on its own.');
  }

  const mwCase = findCase(results, 'many-waiters');
  const mw = rowOf(mwCase, IO);
  if (mw) {
    const m = mw.medians;
    add(`${mwCase.case.replace('x', ' waiters over ')} locks: 1 subscriber connection`, m.subscriberConnections === 1, `${fmt(m.subscriberConnections)} connection(s), ${fmt(m.channels)} channels`);
    const floorBytes = rowOf(mwCase, 'floor-rlock')?.medians.bytesPerWaiter;
    add('… at most 1.25 KiB heap per waiter', m.bytesPerWaiter <= 1280,
      `${fmt(m.bytesPerWaiter)} B per waiter` + (floorBytes === undefined ? '' : `; its RLock floor ${fmt(floorBytes)} B`),
      'A parked waiter is its acquisition object, its lock object, its promise, its timer and its queue entry, plus the harness\'s own frame; GC timing moves the figure by about 100 B.');
    add('… all subscriptions released at the end', m.channelsAfter === 0 && m.leftAfter === 0,
      `${fmt(m.channelsAfter)} channels left, diagnostics() sum ${fmt(m.leftAfter)}, drained in ${fmt(m.drainMs)} ms`);
  }
  return targets;
}

/** The least-squares line through `points` ([x, y] pairs): slope, intercept and R². */
export function fitLine(points) {
  const n = points.length;
  const mx = points.reduce((a, [x]) => a + x, 0) / n;
  const my = points.reduce((a, [, y]) => a + y, 0) / n;
  const sxy = points.reduce((a, [x, y]) => a + (x - mx) * (y - my), 0);
  const sxx = points.reduce((a, [x]) => a + (x - mx) ** 2, 0);
  const syy = points.reduce((a, [, y]) => a + (y - my) ** 2, 0);
  const slope = sxy / sxx;
  return { slope, intercept: my - slope * mx, r2: syy === 0 ? 1 : (sxy * sxy) / (sxx * syy) };
}

/**
 * The scaling curves: every column marked `fit` of the cases sharing a scenario and a `curve`, the
 * library's medians against the cases' x. Linear when R² ≥ 0.98 and the marginal cost (the slope
 * between the two largest x) is at most 1.5× the cost per item at the second largest x (y ÷ x): a
 * line with a fixed cost has its marginal cost below its cost per item, a growing cost above it.
 */
function scalingCurves(results) {
  const groups = new Map();
  for (const c of results.cases.filter((x) => x.curve)) {
    const key = `${c.scenario}: ${c.curve}`;
    groups.set(key, [...(groups.get(key) ?? []), c]);
  }
  const curves = [];
  for (const cases of groups.values()) {
    const [first] = cases;
    for (const col of first.columns.filter((x) => x.fit)) {
      const points = cases
        .map((c) => [c.x, rowOf(c, IO)?.medians[col.key]])
        .filter(([, y]) => Number.isFinite(y))
        .sort(([a], [b]) => a - b);
      if (points.length < 2) continue;
      const fit = fitLine(points);
      const slopeOf = ([x0, y0], [x1, y1]) => (y1 - y0) / (x1 - x0);
      const [x, y] = points.at(-2);
      const growth = slopeOf(points.at(-2), points.at(-1)) / (y / x);
      const title = `${first.title.split(':')[0]} ${first.curve}: ${col.label}`;
      curves.push({ title, label: col.label, item: col.fit, points, ...fit, growth, linear: fit.r2 >= 0.98 && growth <= 1.5 });
    }
  }
  return curves;
}

/** One table per scaling curve, with its line and verdict, as lines; none when no curve ran. */
function scalingSection(curves) {
  if (!curves.length) return [];
  return [
    '## Scaling curves',
    '',
    'Least-squares lines through the library\'s medians: the slope is the cost per item (the constant), "per item" the figure ' +
      'over the count. Linear: R² ≥ 0.98 and the marginal cost between the two largest counts at most 1.5× the cost per item at the second largest.',
    '',
    ...curves.flatMap((c) => [
      `### ${c.title}`,
      '',
      `| ${c.item}s | ${c.label} | per ${c.item} |`,
      '|---|---|---|',
      ...c.points.map(([x, y]) => `| ${fmt(x)} | ${fmt(y)} | ${fmt(y / x)} |`),
      '',
      `Slope ${fmt(c.slope)} per ${c.item}, intercept ${fmt(c.intercept)}, R² ${fmt(c.r2)}; marginal cost at the largest counts ÷ cost per item before them ${times(c.growth)}: ` +
        `**${c.linear ? 'linear' : 'not linear'}**${c.linear ? '' : c.r2 < 0.98 ? ' (not a line)' : ' (the cost per item grows)'}.`,
      '',
    ]),
  ];
}

/** A panel per scaling curve (counts on the bars, log scale). */
function scalingChart(curves, results) {
  const panels = curves.map((c) => ({
    title: `${c.title} (${c.linear ? 'linear' : 'not linear'}, ${fmt(c.slope)} per ${c.item})`,
    unit: '',
    log: true,
    rows: c.points.map(([x, y]) => ({ label: `${fmt(x)} ${c.item}s`, value: y })),
  }));
  return barChart(panels, { title: 'ioredisson: how cost grows with the work', subtitle: `medians of ${results.options.reps} rep(s)` });
}

/** The headline figures per adapter: one row each. */
function summaryTable(results) {
  const pick = [
    ['uncontended', undefined, 'cyclesPerSec', 'uncontended cycles/s'],
    ['handoff', undefined, 'p50', 'hand-off p50 ms'],
    ['contended', 'in-process', 'opsPerSec', 'contended ops/s (8 in 1 process)'],
    ['contended', 'processes', 'opsPerSec', 'contended ops/s (8 processes)'],
    ['idle-waiters', '100', 'cmdsPerSec', 'Redis cmds/s, 100 idle waiters'],
    ['many-locks', undefined, 'opsPerSec', 'many-locks ops/s'],
  ].filter(([s, id]) => findCase(results, s, id));
  const head = ['adapter', 'waiting', ...pick.map((p) => p[3])];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const a of results.adapters) {
    const cells = pick.map(([s, id, key]) => {
      const row = findCase(results, s, id).rows.find((r) => r.adapter === a.id);
      if (!row) return '–';
      if (!Object.keys(row.medians).length) return 'failed';
      return fmt(row.medians[key]);
    });
    const label = a.pkg === 'ioredis' ? `${a.name} (on ioredis)` : `${a.name} ${a.version ?? ''}`;
    const name = a.id === IO ? `**${label}**` : label;
    lines.push(`| ${name} | ${a.error ? `not run: ${a.error}` : a.waiting} | ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

function caseTable(c) {
  const cols = c.columns;
  const main = cols.find((col) => col.main);
  // A case only the library ran (its own pairs) has nothing to divide.
  const ratios = main.better && c.rows.some((r) => Number.isFinite(r.vsRaw) || (r.adapter !== IO && Number.isFinite(r.vsIoredisson)));
  const floors = main.better && c.rows.some((r) => Number.isFinite(r.vsFloor));
  const head = ['adapter', ...cols.map((col) => col.label), ...(ratios ? [`${main.label} ÷ raw`, `${main.label} ÷ ioredisson`] : []), ...(floors ? [`${main.label} ÷ floor`] : []), 'notes'];
  const lines = [`### ${c.title}`, '', `| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const r of c.rows) {
    const notes = [
      ...Object.entries(r.medians).filter(([, v]) => typeof v === 'string').map(([k, v]) => `${k}: ${v}`),
      ...(r.errors.length ? [`errors in ${r.errors.length} rep(s): ${[...new Set(r.errors)].join('; ')}`] : []),
    ].join('; ');
    const cells = cols.map((col) => fmt(r.medians[col.key]));
    const ratioCells = [...(ratios ? [r.vsRaw, r.vsIoredisson] : []), ...(floors ? [r.vsFloor] : [])].map((v) => `${times(v)} | `).join('');
    lines.push(`| ${r.adapter === IO ? `**${r.name}**` : r.name} | ${cells.join(' | ')} | ${ratioCells}${notes} |`);
  }
  return lines.join('\n');
}

/**
 * The library against its floors: one row per case and library adapter whose floor (the same kind's
 * scripts on bare ioredis, bench/adapters/floor-*.mjs) ran in the same case; null when none did.
 */
function floorTable(results) {
  const lines = ['| case | measure | library | floor | library ÷ floor |', '|---|---|---|---|---|'];
  for (const { c, main, r, floor } of floorPairs(results)) {
    lines.push(`| ${c.title} | ${main.label} (${main.better} is better) | ${r.name} ${fmt(r.medians[main.key])} | ${floor.name} ${fmt(floor.medians[main.key])} | ${times(r.vsFloor)} |`);
  }
  return lines.length > 2 ? lines.join('\n') : null;
}

/** Every library row whose floor ran in the same case and whose main figure has a better side: the case, that figure's column, both rows. */
function floorPairs(results) {
  const pairs = [];
  for (const c of results.cases) {
    const main = c.columns.find((col) => col.main);
    if (!main.better) continue;
    for (const r of c.rows.filter((row) => Number.isFinite(row.vsFloor))) {
      const floor = c.rows.find((row) => results.adapters.find((a) => a.id === row.adapter)?.floorOf === r.adapter);
      pairs.push({ c, main, r, floor });
    }
  }
  return pairs;
}

/**
 * Where a RedLock cycle's client CPU goes beyond its floor's, from this run's RedLock case: its
 * members alone (five RLocks taken in parallel) against five RLock floors, those against the
 * RedLock floor, and the composite on top of its members. Empty without those figures.
 */
function redLockSplit(results) {
  const c = findCase(results, 'redlock', 'uncontended-5');
  const io = rowOf(c, IO);
  const floor = c?.rows.find((r) => results.adapters.find((a) => a.id === r.adapter)?.floorOf === IO);
  if (!io?.medians.membersCpu || !floor?.medians.membersCpu) return '';
  const cpu = (row, key) => `${fmt(row.medians[key])} µs`;
  // Medians of per-rep ratios; the ratio of the medians when a rep failed (the reps no longer line up).
  const over = (a, keyA, b, keyB) =>
    times(a.errors.length || b.errors.length ? a.medians[keyA] / b.medians[keyB] : median(a.values[keyA].map((v, i) => v / b.values[keyB][i])));
  return `Client CPU per RedLock cycle: ${over(io, 'cpu', floor, 'cpu')} its floor's (${cpu(io, 'cpu')} against ${cpu(floor, 'cpu')}). ` +
    `Its members alone, five RLocks taken and released in parallel, cost ${over(io, 'membersCpu', floor, 'membersCpu')} five RLock floors ` +
    `(${cpu(io, 'membersCpu')} against ${cpu(floor, 'membersCpu')}): each member is a full acquisition, with its wait, reply bound and ` +
    `watchdog lease; five RLock floors cost ${over(floor, 'membersCpu', floor, 'cpu')} the RedLock floor, whose members are one script ` +
    `call each; the composite adds ${over(io, 'cpu', io, 'membersCpu')} to its members. `;
}

function targetsTable(targets) {
  const lines = ['| target | met | figure | why, when missed |', '|---|---|---|---|'];
  for (const t of targets) {
    lines.push(`| ${t.text} | ${t.met === null ? '?' : t.met ? 'yes' : '**no**'} | ${t.figure} | ${t.met === false ? t.why : ''} |`);
  }
  return lines.join('\n');
}

function machineLine(m, results) {
  return `ioredisson ${m.commit}; ${m.cores} cores, ${m.cpu}, ${m.memoryGiB} GiB; Node ${m.node}; Redis ${m.redis}; ioredis ${m.ioredis}, redis (node-redis) ${m.redisClient}. ` +
    `${results.options.reps} rep(s)${splitNote(results)}, medians; ratios are medians of per-rep pairs. Run ${results.startedAt.slice(0, 16).replace('T', ' ')} UTC, ${Math.round(results.durationS / 60)} min.`;
}

function chart(results) {
  const rowsFor = (scenario, id, key) => {
    const c = findCase(results, scenario, id);
    const variants = results.adapters.filter((a) => a.variantOf).map((a) => a.id);
    return c
      ? c.rows
          .filter((r) => !variants.includes(r.adapter))
          .map((r) => ({ label: r.name, value: r.medians[key], note: Object.keys(r.medians).length ? undefined : 'failed' }))
      : [];
  };
  const panels = [
    { title: 'Hand-off latency p50 (lower is better)', unit: 'ms', log: true, rows: rowsFor('handoff', undefined, 'p50') },
    { title: 'Uncontended lock + unlock (higher is better)', unit: 'cycles/s', rows: rowsFor('uncontended', undefined, 'cyclesPerSec') },
    { title: 'Contended counter, 8 workers in one process (higher is better)', unit: 'ops/s', rows: rowsFor('contended', 'in-process', 'opsPerSec') },
    { title: 'Contended counter, 8 processes (higher is better)', unit: 'ops/s', rows: rowsFor('contended', 'processes', 'opsPerSec') },
    { title: 'Redis commands/s while 100 waiters idle (lower is better)', unit: 'cmds/s', log: true, rows: rowsFor('idle-waiters', '100', 'cmdsPerSec') },
  ].filter((p) => p.rows.length);
  const m = results.machine;
  return barChart(panels, {
    title: 'ioredisson vs. other Redis locks for Node.js',
    subtitle: `${m.cores} cores ${m.cpu} · Node ${m.node} · Redis ${m.redis} · medians of ${results.options.reps} rep(s)`,
  });
}

/** Writes every output file; the README section goes next to bench/ only for a full run. */
export async function writeResults(results, outDir, fullRun) {
  results.machine ??= await machine(results.redisVersion); // kept when re-rendering a saved run
  results.targets = evaluateTargets(results);
  results.curves = scalingCurves(results);
  await mkdir(outDir, { recursive: true });
  const packages = results.adapters
    .filter((a) => a.pkg !== 'ioredis')
    .map((a) => `${a.pkg}@${a.version ?? '?'}${a.error ? ` (not run: ${a.error})` : ''}`);
  const uniq = [...new Set(packages)].join(', ') + `; the raw baseline and the PING floor use ioredis@${results.machine.ioredis}`;
  const md = [
    '# ioredisson benchmark results',
    '',
    machineLine(results.machine, results),
    '',
    `Packages: ${uniq}.`,
    '',
    '## Summary',
    '',
    summaryTable(results),
    '',
    ...floorSection(results),
    ...variantSection(results),
    '## Targets',
    '',
    targetsTable(results.targets),
    '',
    ...scalingSection(results.curves),
    '## All figures',
    '',
    'Commands "sent" are counted by a proxy between client and Redis (what the client sends); "commandstats" ' +
      'deltas also count the calls Lua scripts make inside Redis. Round trips are measured by delaying every reply ' +
      'by 10 ms. Waiting settings are each peer\'s defaults; wait limits (retry counts, acquire timeouts) are lifted ' +
      'so every waiter waits until it gets the lock.',
    '',
    ...results.cases.flatMap((c) => [caseTable(c), '']),
  ].join('\n');
  const files = [];
  const put = async (name, text, dir = outDir) => {
    await writeFile(new URL(name, dir), text);
    files.push(new URL(name, dir).pathname);
  };
  await put('latest.json', `${JSON.stringify(results, null, 2)}\n`);
  await put('latest.md', md);
  await put('latest.svg', chart(results));
  if (results.curves.length) await put('scaling.svg', scalingChart(results.curves, results));
  const section = [
    '## Benchmarks',
    '',
    `Measured with \`npm run bench\` (bench/) against a local Redis: ${machineLine(results.machine, results)}`,
    '',
    summaryTable(results),
    '',
    ...floorSection(results),
    `Targets met: ${results.targets.filter((t) => t.met).length} of ${results.targets.length}. ` +
      `Every table, the targets and the method: [bench/results/latest.md](${REPO_FILES}/blob/main/bench/results/latest.md).`,
    '',
    `![Benchmark chart](${REPO_RAW}/main/bench/results/latest.svg)`,
    '',
    `Packages: ${uniq}.`,
    '',
  ].join('\n');
  await put('README-section.md', section, fullRun ? new URL('../', outDir) : outDir);
  return files;
}

/** The floor table with its heading and reading, as lines; none when no floor ran. */
function floorSection(results) {
  const table = floorTable(results);
  if (!table) return [];
  return [
    '### The library against its floors',
    '',
    'A floor is the kind\'s own scripts from lua/ driven by the least client that runs them correctly (bench/adapters/floor-*.mjs: ' +
      'one shared subscriber, a waiter parked on its channel and retried on each message or when the returned TTL runs out, an explicit ' +
      'lease; no watchdog, scopes, handles or events). Ratios are medians of per-rep pairs of the main figure, the two runs of ' +
      'a pair made back to back: above 1 is faster than the floor where higher is better, slower where lower is better. ' +
      `Every timed run first runs its workload for a while, on objects of the warm-up's own where workers contend: ` +
      `${WARM_UP_MS / 1000} s in one process (cycles, blocks and workers alike) and ${processWarmUpMs(results.options) / 1000} s spread over ` +
      'processes (each of which then runs only a few hundred operations a second, and takes thousands to compile the ' +
      "library's path), so that a short run measures the lock at its steady state rather than the JIT compiling its code.",
    '',
    table,
    '',
  ];
}

/**
 * What the library's variants (adapters with `variantOf: 'ioredisson'`: the same locks with other
 * options) cost against the plain adapter, case by case (the median of per-rep pairs), as lines;
 * none when no variant ran.
 */
function variantSection(results) {
  const lines = ['| case | measure | variant | plain | variant ÷ plain |', '|---|---|---|---|---|'];
  for (const a of results.adapters.filter((x) => x.variantOf)) {
    for (const c of results.cases) {
      const main = c.columns.find((col) => col.main);
      const [variant, plain] = [a.id, a.variantOf].map((id) => c.rows.find((r) => r.adapter === id));
      if (!variant || !plain || !Number.isFinite(variant.medians[main.key])) continue;
      lines.push(`| ${c.title} | ${main.label} | ${variant.name} ${fmt(variant.medians[main.key])} | ${plain.name} ${fmt(plain.medians[main.key])} | ${times(variant.vsIoredisson)} |`);
    }
  }
  if (lines.length === 2) return [];
  return [
    '### What the diagnostics options cost',
    '',
    'The same lock with `ownerInfo` and `deadlockDetection: { after: 1000 }` against the plain one, in the same run (medians of ' +
      'per-rep pairs; idle waiters parked past `after` record their wait and search the wait-for graph at doubling intervals).',
    '',
    lines.join('\n'),
    '',
  ];
}

/**
 * Which cases ran more reps than the rest, e.g. " (uncontended, many-locks: 9 shorter reps;
 * contended: 9 reps of each library-floor pair)".
 */
function splitNote(results) {
  const note = (cases, what) => `${[...new Set(cases.map((c) => c.scenario))].join(', ')}: ${Math.max(...cases.map(what.reps))} ${what.text}`;
  const split = results.cases.filter((c) => c.reps > results.options.reps);
  const paired = results.cases.filter((c) => c.floorPairReps);
  const notes = [
    ...(split.length ? [note(split, { reps: (c) => c.reps, text: 'shorter reps' })] : []),
    ...(paired.length ? [note(paired, { reps: (c) => c.floorPairReps, text: 'reps of each library-floor pair' })] : []),
  ];
  return notes.length ? ` (${notes.join('; ')})` : '';
}
