import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis, { type RedisOptions } from 'ioredis';
import { spawnRedis, stopProcess } from './redis-process';
import { eventually, freePort } from './redis-server';

/** A throwaway Sentinel group for one test file: two servers (master and replica) and one sentinel. */
export interface TestSentinel {
  /** Port of the server the sentinel names as master now. */
  masterPort(): Promise<number>;
  /** A connection to the master through the sentinel (`maxRetriesPerRequest: null`); closed by `stop()`. */
  connect(options?: RedisOptions): Redis;
  /** A direct connection to the data server on `port`; closed by `stop()`. */
  direct(port: number): Redis;
  /** Kills the master (SIGKILL); resolves the new master's port once the sentinel has promoted it. */
  killMaster(): Promise<number>;
  /** Closes every connection, stops every process and removes the temp dir. */
  stop(): Promise<void>;
}

const HOST = '127.0.0.1';
const NAME = 'ioredisson';
/** Generous bounds: the machine running the tests may be loaded. */
const READY_TIMEOUT = 20_000;
const SETTLE_TIMEOUT = 30_000;

/**
 * Starts a master, a replica of it and a sentinel watching them (quorum 1, master down after 1 s),
 * and waits until the sentinel sees the replica in sync, ready to take over.
 */
export async function startSentinel(): Promise<TestSentinel> {
  const dir = await mkdtemp(join(tmpdir(), 'ioredisson-sentinel-'));
  const servers = new Map<number, ChildProcess>();
  const processes: ChildProcess[] = [];
  const connections: Redis[] = [];
  const track = (redis: Redis): Redis => {
    redis.on('error', () => undefined);
    connections.push(redis);
    return redis;
  };
  const stop = async (): Promise<void> => {
    for (const connection of connections.splice(0)) connection.disconnect();
    await Promise.all(processes.splice(0).map((child) => stopProcess(child)));
    await rm(dir, { recursive: true, force: true });
  };

  const ports = [await freePort(), await freePort()];
  const sentinelPort = await freePort();
  let sentinel: Redis;
  try {
    for (const [i, port] of ports.entries()) {
      const replicaOf = i === 0 ? [] : ['--replicaof', HOST, String(ports[0])];
      const args = ['--port', String(port), '--bind', HOST, '--save', '', '--appendonly', 'no', '--dir', dir, ...replicaOf];
      const child = await spawnRedis(args, port, READY_TIMEOUT);
      processes.push(child);
      servers.set(port, child);
    }
    const config = join(dir, 'sentinel.conf');
    await writeFile(
      config,
      [
        `port ${sentinelPort}`,
        `bind ${HOST}`,
        `dir ${dir}`,
        `sentinel monitor ${NAME} ${HOST} ${ports[0]} 1`,
        `sentinel down-after-milliseconds ${NAME} 1000`,
        `sentinel failover-timeout ${NAME} 5000`,
        '',
      ].join('\n'),
    );
    processes.push(await spawnRedis([config, '--sentinel'], sentinelPort, READY_TIMEOUT, '+monitor master'));
    sentinel = track(new Redis({ host: HOST, port: sentinelPort, maxRetriesPerRequest: null }));
    await settled(() => replicasInSync(sentinel).then((n) => n > 0), 'the sentinel to see the replica in sync');
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }

  const masterPort = async (): Promise<number> => {
    const [, port] = (await sentinel.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', NAME)) as [string, string];
    return Number(port);
  };
  const newMaster = async (old: number): Promise<number> => {
    await settled(() => masterPort().then((port) => port !== old), 'the sentinel to name a new master');
    const port = await masterPort();
    const redis = new Redis({ host: HOST, port, lazyConnect: true });
    redis.on('error', () => undefined);
    try {
      await settled(() => redis.role().then(([role]) => role === 'master'), `the server on ${port} to act as master`);
    } finally {
      redis.disconnect();
    }
    return port;
  };

  return {
    masterPort,
    connect: (options = {}) =>
      track(new Redis({ sentinels: [{ host: HOST, port: sentinelPort }], name: NAME, maxRetriesPerRequest: null, ...options })),
    // A short disconnectTimeout: ioredis keeps a timer of that length after disconnecting a connection
    // whose server was killed, which would hold the test run open.
    direct: (port) => track(new Redis({ host: HOST, port, maxRetriesPerRequest: null, disconnectTimeout: 100 })),
    async killMaster() {
      const old = await masterPort();
      const child = servers.get(old);
      if (!child) throw new Error(`no server of this group on port ${old}`);
      await stopProcess(child, 'SIGKILL');
      return newMaster(old);
    },
    stop,
  };
}

/** Replicas the sentinel reports with their link to the master up. */
async function replicasInSync(sentinel: Redis): Promise<number> {
  const replicas = (await sentinel.call('SENTINEL', 'REPLICAS', NAME)) as string[][];
  return replicas.filter((fields) => {
    const info = new Map<string, string>();
    for (let i = 0; i + 1 < fields.length; i += 2) info.set(fields[i]!, fields[i + 1]!);
    return info.get('master-link-status') === 'ok' && !info.get('flags')?.includes('disconnected');
  }).length;
}

/** Waits for `check` to hold (a rejection counts as not yet), within {@link SETTLE_TIMEOUT}. */
function settled(check: () => Promise<boolean>, what: string): Promise<void> {
  return eventually(() => check().catch(() => false), SETTLE_TIMEOUT, what);
}
