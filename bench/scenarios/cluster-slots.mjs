// Issue 23, item 4: lock names in a Redis Cluster, spread over 1 to 4 096 slots. A local cluster of
// three primaries (started on first use), a fixed number of lock names, hash-tagged so that they fall
// evenly into N distinct slots. Per case: lock + unlock cycles (throughput, CPU per cycle), the
// watchdog renewing every name held (renewal calls per round: a call never spans slots, so the
// batches are per slot), and one waiter parked on each held name (subscriber connections, shard
// channels, drain). Not in the default run.
import calculateSlot from 'cluster-key-slot';
import { Cluster } from 'ioredis';
import { commandStats, renewalRoundMs, serverCpuMs, statsDelta, subscriberConnections } from '../lib/redis-info.mjs';
import { startCluster } from '../lib/redis-cluster.mjs';
import { settledHeap, sleep, until, withTimeout } from '../lib/stats.mjs';

/** Lock names of every case: as many as the largest slot count, so every slot has one. */
const NAMES = 4_096;
const PRIMARIES = 3;
const WATCHDOG_MS = 10_000;
const PERIOD_MS = WATCHDOG_MS / 3;
/** The library's default lockWatchdogBatchSize. */
const BATCH = 100;
/** Concurrent callers of the lock + unlock cycles, each cycling through its share of the names. */
const CALLERS = 32;

let shared; // started on first use; the runner's killAll() stops its servers at the end
const cluster = () =>
  (shared ??= startCluster(PRIMARIES).then((c) => {
    const client = new Cluster(c.nodes);
    return { ...c, client };
  }));

/** `count` hash tags, each in a slot of its own, in the order found. */
function distinctSlotTags(count) {
  const tags = [];
  const slots = new Set();
  for (let i = 0; tags.length < count; i++) {
    const slot = calculateSlot(`s${i}`);
    if (!slots.has(slot)) {
      slots.add(slot);
      tags.push(`s${i}`);
    }
  }
  return tags;
}

/** The case's names: name i in the slot of tag i mod `slots`, so a slot's names are 1 in `slots` apart. */
function names(slots) {
  const tags = distinctSlotTags(slots);
  return Array.from({ length: NAMES }, (_, i) => `bench:slots:{${tags[i % slots]}}:${i}`);
}

const sum = async (admins, read) => (await Promise.all(admins.map(read))).reduce((a, b) => a + b, 0);
const allStats = async (admins) => {
  const total = {};
  for (const stats of await Promise.all(admins.map(commandStats))) {
    for (const [name, calls] of Object.entries(stats)) total[name] = (total[name] ?? 0) + calls;
  }
  return total;
};

export default {
  name: 'cluster-slots',
  title: 'Lock names over Cluster slots, scaling',
  takesPart: (adapter) => adapter.id === 'ioredisson',
  cases: ({ quick, scalingSlots }) => {
    const slots = scalingSlots ?? (quick ? [1, 64, 4_096] : [1, 16, 256, 4_096]);
    for (const n of slots)
      if (!(n >= 1 && n <= NAMES)) throw new Error(`cluster-slots: ${n} slots, not within 1..${NAMES}`);
    return slots.map((n) => ({
      id: String(n),
      label: `${NAMES.toLocaleString('en-US')} names over ${n} slot${n === 1 ? '' : 's'}, ${PRIMARIES} primaries`,
      slots: n,
      curve: `${NAMES.toLocaleString('en-US')} names`,
      x: n,
    }));
  },
  columns: [
    { key: 'renewalCallsPerRound', label: 'renewal calls per round', main: true, fit: 'slot' },
    { key: 'renewalClientCpuPerSec', label: 'renewal: client CPU ms/s', fit: 'slot' },
    { key: 'renewalRedisCpuPerSec', label: 'renewal: Redis CPU ms/s (all primaries)', fit: 'slot' },
    { key: 'roundMs', label: 'renewal round ms', fit: 'slot' },
    { key: 'cyclesPerSec', label: 'lock + unlock cycles/s' },
    { key: 'clientUsPerCycle', label: 'client CPU µs per cycle' },
    { key: 'redisUsPerCycle', label: 'Redis CPU µs per cycle (all primaries)' },
    { key: 'primariesUsed', label: 'primaries serving the names' },
    { key: 'subscriberConnections', label: 'subscriber connections (waiting on every name)' },
    { key: 'shardChannels', label: 'shard channels subscribed' },
    { key: 'heapBytesPerWaiter', label: 'heap B per waiter' },
    { key: 'drainMs', label: 'drain ms' },
  ],

  async run(_env, adapter, { slots }) {
    const { nodes, admins, client } = await cluster();
    await Promise.all(admins.map((admin) => admin.flushall()));
    const keys = names(slots);
    const before = await sum(admins, subscriberConnections);
    const lib = await adapter.setup({ cluster: nodes, options: { lockWatchdogTimeout: WATCHDOG_MS } });
    const waiting = await adapter.setup({ cluster: nodes });
    try {
      await (
        await lib.lock(keys[0])
      )();
      const cycles = await cycle(admins, lib, keys);
      // Taken 100 at a time in name order: the watchdog renews in the order the locks were taken.
      const releases = [];
      for (let i = 0; i < keys.length; i += BATCH)
        releases.push(...(await Promise.all(keys.slice(i, i + BATCH).map((key) => lib.lock(key)))));
      const renewal = await renewals(admins, client, keys);
      const heapBefore = await settledHeap();
      const done = Promise.all(keys.map((key) => waiting.lock(key).then((release) => release())));
      done.catch(() => undefined);
      await until(() => waiting.diagnostics().waiters === keys.length, 60_000, 'waiters to park');
      const heapBytesPerWaiter = ((await settledHeap()) - heapBefore) / keys.length;
      const subscribers = (await sum(admins, subscriberConnections)) - before;
      const shardChannels = await sum(
        admins,
        async (admin) => (await admin.pubsub('SHARDCHANNELS', 'redisson_lock__channel*')).length,
      );
      const t = performance.now();
      await Promise.all(releases.map((release) => release()));
      await withTimeout(done, 120_000, 'drain');
      return {
        renewalCallsPerRound: renewal.callsPerRound,
        renewalClientCpuPerSec: renewal.clientCpuPerSec,
        renewalRedisCpuPerSec: renewal.redisCpuPerSec,
        roundMs: renewal.roundMs,
        ...cycles,
        primariesUsed: await primariesServing(client, keys),
        subscriberConnections: subscribers,
        shardChannels,
        heapBytesPerWaiter,
        drainMs: performance.now() - t,
      };
    } finally {
      await lib.teardown();
      await waiting.teardown();
    }
  },
};

/** One lock + unlock cycle on every name, CALLERS at a time: throughput and CPU per cycle. */
async function cycle(admins, lib, keys) {
  const [cpu0, client0, t0] = [await sum(admins, serverCpuMs), process.cpuUsage(), performance.now()];
  await Promise.all(
    Array.from({ length: CALLERS }, async (_, caller) => {
      for (let i = caller; i < keys.length; i += CALLERS) await (await lib.lock(keys[i]))();
    }),
  );
  const [client, t1, cpu1] = [process.cpuUsage(client0), performance.now(), await sum(admins, serverCpuMs)];
  return {
    cyclesPerSec: keys.length / ((t1 - t0) / 1000),
    clientUsPerCycle: (client.user + client.system) / keys.length,
    redisUsPerCycle: ((cpu1 - cpu0) * 1000) / keys.length,
  };
}

/**
 * The watchdog renewing every held name: its round's duration (from outside), then a window of two
 * periods with nothing else running: script calls per round (rounds counted by the HEXISTS the
 * script makes per lock), this process's CPU and every primary's.
 */
async function renewals(admins, client, keys) {
  const roundMs = await renewalRoundMs(client, keys[0], keys.at(-1));
  const [stats0, cpu0, client0, t0] = [
    await allStats(admins),
    await sum(admins, serverCpuMs),
    process.cpuUsage(),
    performance.now(),
  ];
  await sleep(2 * PERIOD_MS);
  const [stats1, cpu1, cpu, t1] = [
    await allStats(admins),
    await sum(admins, serverCpuMs),
    process.cpuUsage(client0),
    performance.now(),
  ];
  const held = await sum(admins, (admin) => admin.dbsize());
  if (held !== keys.length)
    throw new Error(`${keys.length - held} of ${keys.length} locks expired: renewal did not keep up`);
  const calls = statsDelta(stats0, stats1);
  const rounds = (calls.hexists ?? 0) / keys.length;
  const seconds = (t1 - t0) / 1000;
  return {
    roundMs,
    callsPerRound: ((calls.evalsha ?? 0) + (calls.eval ?? 0)) / rounds,
    clientCpuPerSec: (cpu.user + cpu.system) / 1000 / seconds,
    redisCpuPerSec: (cpu1 - cpu0) / seconds,
  };
}

/** How many primaries serve the names' slots, by the cluster's slot map. */
async function primariesServing(client, keys) {
  const slots = [...new Set(keys.map((key) => calculateSlot(key)))];
  const owners = new Set();
  for (const [from, to, [host, port]] of await client.cluster('SLOTS')) {
    if (slots.some((slot) => slot >= from && slot <= to)) owners.add(`${host}:${port}`);
  }
  return owners.size;
}
