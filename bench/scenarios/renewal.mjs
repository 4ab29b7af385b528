// Issue 23, item 4: what renewing many held locks costs, against the renewal script alone. The
// client holds N RLocks with a 10 s lockWatchdogTimeout (a round every 3.3 s, where the default 30 s
// gives one every 10 s); the baseline runs lua/lock/renew.lua on bare ioredis over the same N locks in
// batches of the library's default size, a round every 3.3 s. Not in the default run.
//
// Not 3 s: a round sends its batches one after another, a round trip each, and on this loaded 2-core
// machine a round of 100k locks outlasted the 2 s a 3 s lease leaves it (80 % of the leases lapsed).
import { readFile } from 'node:fs/promises';
import Redis from 'ioredis';
import { commandStats, renewalRoundMs, serverCpuMs, statsDelta } from '../lib/redis-info.mjs';
import { sleep } from '../lib/stats.mjs';

const WATCHDOG_MS = 10_000;
const PERIOD_MS = WATCHDOG_MS / 3;
/** The library's default lockWatchdogBatchSize. */
const BATCH = 100;
const SCRIPT_CALLS = ['evalsha', 'eval'];
/** The calls renew.lua makes for each lock. */
const PER_LOCK_IN_SCRIPT = ['hexists', 'pexpire'];

const k = (n) => (n >= 1000 ? `${n / 1000}k` : String(n));

export default {
  name: 'renewal',
  title: 'Watchdog renewal, scaling',
  takesPart: (adapter) => adapter.id === 'ioredisson',
  cases: ({ quick, scalingLocks }) => {
    const locks = scalingLocks ?? (quick ? [1_000, 10_000] : [1_000, 10_000, 100_000]);
    const windowMs = 2 * PERIOD_MS;
    return locks.map((n) => ({
      id: String(n),
      label: `${k(n)} held locks, 10 s watchdog`,
      locks: n,
      windowMs,
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
    { key: 'roundMs', label: 'round ms', fit: 'lock' },
    { key: 'scriptRoundMs', label: 'script alone: round ms' },
    { key: 'commandsPerLockRound', label: 'Redis calls per lock per round' },
    { key: 'scriptCommandsPerLockRound', label: 'script alone: calls per lock per round' },
    { key: 'outsidePerLockRound', label: 'calls outside the script per lock per round' },
    { key: 'locksPerScriptCall', label: 'locks per script call' },
  ],

  async run(env, adapter, { locks, windowMs }) {
    const keys = Array.from({ length: locks }, (_, i) => `bench:renew:${i}`);
    const lib = await adapter.setup({ url: env.url, options: { lockWatchdogTimeout: WATCHDOG_MS } });
    let library;
    let owner;
    try {
      // In order, 100 at a time: the tracker renews in the order the locks were taken, one batch
      // after another, and a batch queued behind thousands of acquisitions on the connection takes
      // so long that a 100k-lock round outlasts the lease (2 000 at a time lost most of them).
      for (let i = 0; i < locks; i += BATCH) await Promise.all(keys.slice(i, i + BATCH).map((key) => lib.lock(key)));
      library = await measure(env, keys, windowMs);
      // The script alone renews as this owner's field: the same names and arguments, byte for byte.
      [owner] = await env.admin.hkeys(keys[0]);
    } finally {
      await lib.teardown();
    }
    await env.admin.flushall();
    const alone = await scriptAlone(env, keys, owner, windowMs);
    return {
      redisCpuPerSec: library.redisCpuPerSec,
      scriptRedisCpuPerSec: alone.redisCpuPerSec,
      redisCpuRatio: library.redisUsPerRenewal / alone.redisUsPerRenewal,
      clientCpuPerSec: library.clientCpuPerSec,
      scriptClientCpuPerSec: alone.clientCpuPerSec,
      redisUsPerRenewal: library.redisUsPerRenewal,
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
 * Runs renew.lua over `keys`, held by `owner`, while `measure` runs: a round every period from start
 * to start, as the tracker's timer does.
 */
async function scriptAlone(env, keys, owner, windowMs) {
  const redis = new Redis(env.url);
  redis.defineCommand('renewLocks', {
    lua: await readFile(new URL('../../lua/lock/renew.lua', import.meta.url), 'utf8'),
  });
  const owners = Array(BATCH).fill(owner);
  let stopped = false;
  try {
    for (let i = 0; i < keys.length; i += 2_000) {
      const pipeline = redis.pipeline();
      for (const key of keys.slice(i, i + 2_000)) pipeline.hset(key, owner, 1).pexpire(key, WATCHDOG_MS);
      await pipeline.exec();
    }
    const rounds = (async () => {
      while (!stopped) {
        const next = performance.now() + PERIOD_MS;
        for (let i = 0; i < keys.length; i += BATCH) {
          const batch = keys.slice(i, i + BATCH);
          await redis.renewLocks(batch.length, ...batch, WATCHDOG_MS, ...owners.slice(0, batch.length));
        }
        await sleep(Math.max(0, next - performance.now()));
      }
    })();
    try {
      return await measure(env, keys, windowMs);
    } finally {
      stopped = true;
      await rounds;
    }
  } finally {
    redis.disconnect();
  }
}

/**
 * Round durations first (probing TTLs), then a window of `windowMs` with nothing else running:
 * Redis CPU (INFO cpu), this process's CPU, and the calls Redis executed (INFO commandstats).
 */
async function measure(env, keys, windowMs) {
  const roundMs = await renewalRoundMs(env.admin, keys[0], keys.at(-1));
  const [stats0, cpu0, client0, t0] = [
    await commandStats(env.admin),
    await serverCpuMs(env.admin),
    process.cpuUsage(),
    performance.now(),
  ];
  await sleep(windowMs);
  const [stats1, cpu1, client, t1] = [
    await commandStats(env.admin),
    await serverCpuMs(env.admin),
    process.cpuUsage(client0),
    performance.now(),
  ];
  const held = await env.admin.dbsize();
  if (held !== keys.length)
    throw new Error(`${keys.length - held} of ${keys.length} locks expired: renewal did not keep up`);
  const seconds = (t1 - t0) / 1000;
  const calls = statsDelta(stats0, stats1);
  const count = (names) => names.reduce((n, name) => n + (calls[name] ?? 0), 0);
  const all = count(Object.keys(calls));
  const scriptCalls = count(SCRIPT_CALLS);
  // Full rounds in the window, counted by script calls (ceil(N / batch) a round).
  const rounds = scriptCalls / Math.ceil(keys.length / BATCH);
  return {
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
