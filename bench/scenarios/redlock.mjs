// 7. RedLock over 5 local servers and MultiLock over 3 keys.
// - uncontended: acquire + release cycles of one caller on one key over 5 independent servers, for
//   ioredisson's RedLock and the two Redlock libraries; target: at or above both peers' cycle rate.
//   The library and its floor also time their members alone, one RLock per server taken and
//   released in parallel (the floor: five RLock floors), and report client CPU per cycle of both, so
//   that the report can tell the members' cost from the composite's in the same run.
// - multilock-idle: a holder keeps 3 keys; waiters for all 3 sit idle. Redis commands/s while
//   nothing happens (ioredisson's MultiLock parks on pub/sub; the Redlock libraries poll).
import Redis from 'ioredis';
import { Redlock as SesameRedlock } from '@sesamecare-oss/redlock';
import Redlock from 'redlock';
import { BASE_WAIT_PER_LOCK_MS, RedissonClient } from 'ioredisson';
import { total } from '../lib/proxy-client.mjs';
import { commandStats, statsDelta } from '../lib/redis-info.mjs';
import { startRedis } from '../lib/redis-server.mjs';
import { latency, sleep } from '../lib/stats.mjs';
import { timedCycles, warmUp } from '../lib/workloads.mjs';

const PEERS = ['ioredisson', 'redlock', 'sesamecare-redlock'];
const SERVERS = 5;
const LEASE = 30_000;

let servers; // started on first use; the runner's killAll() stops them at the end
const fiveServers = () => (servers ??= Promise.all(Array.from({ length: SERVERS }, () => startRedis())));

/** `{ lock(keys) -> release(), teardown() }` over `urls`, per adapter. */
const setups = {
  async ioredisson(urls) {
    const connections = urls.map((url) => new Redis(url));
    const clients = connections.map((redis) => new RedissonClient(redis));
    return {
      multi: true,
      async lock(keys) {
        // One key over every server: a RedLock; several keys on one server: a MultiLock.
        const locks = keys.length === 1 ? clients.map((c) => c.getLock(keys[0])) : keys.map((key) => clients[0].getLock(key));
        const composite = keys.length === 1 ? clients[0].getRedLock(locks) : clients[0].getMultiLock(locks);
        const handle = await composite.acquire();
        return () => handle.release();
      },
      // The members alone, as a RedLock round without waitTime takes them: each waiting up to its share of the round.
      async lockMembers(key) {
        const handles = await Promise.all(clients.map((c) => c.getLock(key).acquire({ waitTime: BASE_WAIT_PER_LOCK_MS })));
        return () => Promise.all(handles.map((handle) => handle.release()));
      },
      diagnostics: () => clients.reduce((sum, c) => sum + c.diagnostics().waiters, 0),
      async teardown() {
        await Promise.all(clients.map((c) => c.shutdown()));
        for (const redis of connections) redis.disconnect();
      },
    };
  },
  async redlock(urls) {
    const connections = urls.map((url) => new Redis(url));
    const redlock = new Redlock(connections, { retryCount: -1 });
    redlock.on('clientError', () => undefined);
    return {
      async lock(keys) {
        const lock = await redlock.lock(keys.length === 1 ? keys[0] : keys, LEASE);
        return () => lock.unlock();
      },
      teardown: () => connections.forEach((redis) => redis.disconnect()),
    };
  },
  async 'sesamecare-redlock'(urls) {
    const connections = urls.map((url) => new Redis(url));
    const redlock = new SesameRedlock(connections, { retryCount: -1 });
    redlock.on('error', () => undefined);
    return {
      async lock(keys) {
        const lock = await redlock.acquire(keys, LEASE);
        return () => lock.release();
      },
      teardown: () => connections.forEach((redis) => redis.disconnect()),
    };
  },
};

export default {
  name: 'redlock',
  title: 'RedLock over 5 servers / MultiLock over 3 keys',
  // The RedLock floor (bench/adapters/floor-redlock.mjs) runs the RedLock case only.
  takesPart: (adapter, spec) => PEERS.includes(adapter.id) || (typeof adapter.setupRedLock === 'function' && spec.id === 'uncontended-5'),
  splitReps: 3,
  cases: ({ quick, cycles, waiters }) => [
    { id: 'uncontended-5', label: 'RedLock, 5 servers, one caller, one key', cycles: cycles ?? (quick ? 300 : 1_000) },
    { id: 'multilock-idle', label: `MultiLock, 3 keys held, ${waiters?.[0] ?? 20} idle waiters`, waiters: waiters?.[0] ?? 20, idleMs: quick ? 1_000 : 2_000 },
  ],
  columns: [
    { key: 'main', label: 'cycles/s (uncontended) · Redis cmds/s idle (multilock)', better: 'higher', main: true },
    { key: 'p50', label: 'p50 ms' },
    { key: 'p99', label: 'p99 ms' },
    { key: 'commands', label: 'Redis cmds/cycle (all servers)' },
    { key: 'cpu', label: 'client CPU µs/cycle' },
    { key: 'members', label: 'members alone: cycles/s' },
    { key: 'membersCpu', label: 'members alone: client CPU µs/cycle' },
  ],

  async run(env, adapter, spec) {
    return spec.id === 'uncontended-5' ? uncontended(adapter, spec) : idle(env, adapter, spec);
  },
};

async function uncontended(adapter, { cycles }) {
  const urls = (await fiveServers()).map((server) => server.url);
  const admins = urls.map((url) => new Redis(url));
  const lib = await (adapter.setupRedLock ?? setups[adapter.id])(urls);
  const key = 'bench:redlock';
  try {
    await Promise.all(admins.map((admin) => admin.flushall()));
    await warmUp(async () => (await lib.lock([key]))());
    const before = await Promise.all(admins.map(commandStats));
    const composite = await timedCycles(cycles, async () => (await lib.lock([key]))());
    const after = await Promise.all(admins.map(commandStats));
    const commands = before.reduce((sum, b, i) => sum + total(statsDelta(b, after[i])), 0) / cycles;
    const result = { main: composite.rate, ...latency(composite.samples), commands, cpu: composite.cpu };
    if (!lib.lockMembers) return result;
    await warmUp(async () => (await lib.lockMembers(key))());
    const members = await timedCycles(cycles, async () => (await lib.lockMembers(key))());
    return { ...result, members: members.rate, membersCpu: members.cpu };
  } finally {
    await lib.teardown();
    for (const admin of admins) admin.disconnect();
  }
}

async function idle(env, adapter, { waiters, idleMs }) {
  const keys = ['bench:multi:a', 'bench:multi:b', 'bench:multi:c'];
  const holder = await setups[adapter.id]([env.url]);
  const lib = await setups[adapter.id]([env.url]);
  try {
    await (await lib.lock(keys))(); // warm-up
    const release = await holder.lock(keys);
    const done = Promise.all(Array.from({ length: waiters }, () => lib.lock(keys).then((r) => r())));
    done.catch(() => undefined);
    await sleep(500);
    const before = await commandStats(env.admin);
    const t0 = performance.now();
    await sleep(idleMs);
    const seconds = (performance.now() - t0) / 1000;
    const idleCommands = total(statsDelta(before, await commandStats(env.admin)));
    await release();
    await done;
    return { main: idleCommands / seconds };
  } finally {
    await holder.teardown();
    await lib.teardown();
  }
}
