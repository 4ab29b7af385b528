// Issue 23, item 4: what renewing many held locks costs, against the renewal script alone. The
// client holds N RLocks with a 10 s lockWatchdogTimeout (`--watchdog`; a round every third of it, where
// the default 30 s gives one every 10 s); the baseline runs lua/lock/renew.lua on bare ioredis over the
// same N locks in batches of the library's default size, as many calls in flight as the library keeps,
// a round every period. `--latency` puts both behind the proxy, which holds each reply back that long.
// Not in the default run.
import { readFile } from 'node:fs/promises';
import Redis from 'ioredis';
import { commandStats, renewalRoundMs, serverCpuMs, statsDelta } from '../lib/redis-info.mjs';
import { sleep } from '../lib/stats.mjs';

/** The lockWatchdogTimeout unless `--watchdog` gives one. */
const WATCHDOG_MS = 10_000;
/** The library's default lockWatchdogBatchSize. */
const BATCH = 100;
/** The renewal calls the library keeps in flight during a round (RENEWAL_CALLS_IN_FLIGHT). */
const IN_FLIGHT = 8;
const SCRIPT_CALLS = ['evalsha', 'eval'];
/** The calls renew.lua makes for each lock. */
const PER_LOCK_IN_SCRIPT = ['hexists', 'pexpire'];

const k = (n) => (n >= 1000 ? `${n / 1000}k` : String(n));

export default {
  name: 'renewal',
  title: 'Watchdog renewal, scaling',
  takesPart: (adapter) => adapter.id === 'ioredisson',
  cases: ({ quick, scalingLocks, watchdog = WATCHDOG_MS, latency = 0 }) => {
    const locks = scalingLocks ?? (quick ? [1_000, 10_000] : [1_000, 10_000, 100_000]);
    return locks.map((n) => ({
      id: String(n),
      label: `${k(n)} held locks, ${watchdog / 1000} s watchdog${latency ? `, replies ${latency} ms late` : ''}`,
      locks: n,
      watchdog,
      latency,
      curve: 'held locks',
      x: n,
    }));
  },
  columns: [
    { key: 'redisCpuPerSec', label: 'Redis CPU ms/s', main: true, fit: 'lock' },
    { key: 'scriptRedisCpuPerSec', label: 'script alone: Redis CPU ms/s', fit: 'lock' },
    { key: 'redisUsPerRenewal', label: 'Redis CPU µs per lock renewed' },
    { key: 'redisCpuRatio', label: 'Redis CPU per lock renewed ÷ script alone' },
    { key: 'clientCpuPerSec', label: 'client CPU ms/s', fit: 'lock' },
    { key: 'scriptClientCpuPerSec', label: 'script alone: client CPU ms/s' },
    { key: 'kept', label: 'locks still held' },
    { key: 'roundMs', label: 'round ms', fit: 'lock' },
    { key: 'scriptRoundMs', label: 'script alone: round ms' },
    { key: 'commandsPerLockRound', label: 'Redis calls per lock per round' },
    { key: 'scriptCommandsPerLockRound', label: 'script alone: calls per lock per round' },
    { key: 'outsidePerLockRound', label: 'calls outside the script per lock per round' },
    { key: 'locksPerScriptCall', label: 'locks per script call' },
  ],

  async run(env, adapter, { locks, watchdog, latency }) {
    const keys = Array.from({ length: locks }, (_, i) => `bench:renew:${i}`);
    const url = latency ? env.proxy.url : env.url;
    env.proxy.setDelay(latency);
    let library;
    let alone;
    try {
      const lib = await adapter.setup({ url, options: { lockWatchdogTimeout: watchdog } });
      let owner;
      try {
        // In order, 100 at a time: the tracker renews in the order the locks were taken, and a batch
        // queued behind thousands of acquisitions on the connection takes so long that a 100k-lock
        // round outlasts the lease (2 000 at a time lost most of them).
        for (let i = 0; i < locks; i += BATCH) await Promise.all(keys.slice(i, i + BATCH).map((key) => lib.lock(key)));
        library = await measure(env, keys, watchdog);
        // The script alone renews as this owner's field: the same names and arguments, byte for byte.
        [owner] = await env.admin.hkeys(keys[0]);
      } finally {
        await lib.teardown();
      }
      await env.admin.flushall();
      alone = await scriptAlone(env, url, keys, owner, watchdog);
    } finally {
      env.proxy.setDelay(0);
    }
    return {
      redisCpuPerSec: library.redisCpuPerSec,
      scriptRedisCpuPerSec: alone.redisCpuPerSec,
      redisCpuRatio: library.redisUsPerRenewal / alone.redisUsPerRenewal,
      clientCpuPerSec: library.clientCpuPerSec,
      scriptClientCpuPerSec: alone.clientCpuPerSec,
      redisUsPerRenewal: library.redisUsPerRenewal,
      kept: library.kept,
      scriptKept: alone.kept,
      roundMs: library.roundMs,
      scriptRoundMs: alone.roundMs,
      commandsPerLockRound: library.commandsPerLockRound,
      scriptCommandsPerLockRound: alone.commandsPerLockRound,
      outsidePerLockRound: library.outsidePerLockRound,
      locksPerScriptCall: library.locksPerScriptCall,
      calls: library.calls,
      scriptCalls: alone.calls,
    };
  },
};

/**
 * Runs renew.lua at `url` over `keys`, held by `owner`, while `measure` runs: a round every third of
 * `watchdog` from start to start, `IN_FLIGHT` calls at a time, as the tracker does. The locks are
 * written with a lease that outlasts writing them all; the first round sets the watchdog's.
 */
async function scriptAlone(env, url, keys, owner, watchdog) {
  const redis = new Redis(url);
  redis.defineCommand('renewLocks', {
    lua: await readFile(new URL('../../lua/lock/renew.lua', import.meta.url), 'utf8'),
  });
  const owners = Array(BATCH).fill(owner);
  let stopped = false;
  try {
    for (let i = 0; i < keys.length; i += 2_000) {
      const pipeline = redis.pipeline();
      for (const key of keys.slice(i, i + 2_000)) pipeline.hset(key, owner, 1).pexpire(key, 60_000);
      await pipeline.exec();
    }
    const rounds = (async () => {
      while (!stopped) {
        const next = performance.now() + watchdog / 3;
        let i = 0;
        const send = async () => {
          while (i < keys.length) {
            const batch = keys.slice(i, (i += BATCH));
            await redis.renewLocks(batch.length, ...batch, watchdog, ...owners.slice(0, batch.length));
          }
        };
        await Promise.all(Array.from({ length: IN_FLIGHT }, send));
        await sleep(Math.max(0, next - performance.now()));
      }
    })();
    try {
      return await measure(env, keys, watchdog);
    } finally {
      stopped = true;
      await rounds;
    }
  } finally {
    redis.disconnect();
  }
}

/**
 * Round durations first (probing TTLs), then a window of two periods (two thirds of `watchdog`) with
 * nothing else running: Redis CPU (INFO cpu), this process's CPU, the calls Redis executed (INFO
 * commandstats), and the locks still held at its end (those whose renewal came too late lapsed).
 */
async function measure(env, keys, watchdog) {
  const [first, last] = await heldEnds(env.admin, keys);
  const roundMs = await renewalRoundMs(env.admin, first, last, 4 * watchdog);
  const [stats0, cpu0, client0, t0] = [
    await commandStats(env.admin),
    await serverCpuMs(env.admin),
    process.cpuUsage(),
    performance.now(),
  ];
  await sleep((2 * watchdog) / 3);
  const [stats1, cpu1, client, t1] = [
    await commandStats(env.admin),
    await serverCpuMs(env.admin),
    process.cpuUsage(client0),
    performance.now(),
  ];
  const kept = await env.admin.dbsize();
  const seconds = (t1 - t0) / 1000;
  const calls = statsDelta(stats0, stats1);
  const count = (names) => names.reduce((n, name) => n + (calls[name] ?? 0), 0);
  const all = count(Object.keys(calls));
  const scriptCalls = count(SCRIPT_CALLS);
  // Full rounds in the window, counted by script calls (ceil(N / batch) a round).
  const rounds = scriptCalls / Math.ceil(keys.length / BATCH);
  return {
    kept,
    redisCpuPerSec: (cpu1 - cpu0) / seconds,
    // Per lock renewed, so that a window holding a round more or less than the other's compares fairly.
    redisUsPerRenewal: ((cpu1 - cpu0) * 1000) / (calls.hexists ?? 0),
    clientCpuPerSec: (client.user + client.system) / 1000 / seconds,
    roundMs,
    commandsPerLockRound: all / (keys.length * rounds),
    outsidePerLockRound: (all - scriptCalls - count(PER_LOCK_IN_SCRIPT)) / (keys.length * rounds),
    locksPerScriptCall: (calls.hexists ?? 0) / scriptCalls,
    calls: Object.entries(calls)
      .map(([name, n]) => `${name} ${n}`)
      .join(', '),
  };
}

/**
 * The first and the last of `keys` that still exist: renewal goes in the order the locks were taken,
 * and a lock that lapsed is no longer renewed. Looked up 100 at a time from either end, so as not to
 * stall the library's client in this process with 100k replies.
 */
async function heldEnds(admin, keys) {
  const find = async (indices) => {
    for (let i = 0; i < indices.length; i += 100) {
      const chunk = indices.slice(i, i + 100);
      const exists = await admin.pipeline(chunk.map((j) => ['exists', keys[j]])).exec();
      const found = exists.findIndex(([, n]) => n === 1);
      if (found >= 0) return keys[chunk[found]];
    }
    throw new Error('every lock lapsed');
  };
  const indices = keys.map((_, i) => i);
  return [await find(indices), await find(indices.reverse())];
}
