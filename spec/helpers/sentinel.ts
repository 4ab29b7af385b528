import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis, { type RedisOptions } from 'ioredis';
import { spawnRedis, stopProcess, type ServerProcess } from './redis-process';
import { aofFileArgs, debugCommandArgs } from './server-source';
import { eventually, freePort } from './redis-server';

/**
 * A throwaway replicated group for one test file: a primary, its replicas and, unless there are
 * none, sentinels watching them.
 */
export interface TestSentinel {
  /** Ports of every data server (primary and replicas), in start order. */
  readonly ports: readonly number[];
  /** Ports of the sentinels (none for a plain primary/replica group). */
  readonly sentinelPorts: readonly number[];
  /** The sentinels' name for the group. */
  readonly name: string;
  /** Port of the server the sentinels name as master now (the first server without sentinels). */
  masterPort(): Promise<number>;
  /** A connection to the master through the sentinels, or directly without; closed by `stop()`. */
  connect(options?: RedisOptions): Redis;
  /** A direct connection to the data server on `port`; closed by `stop()`. */
  direct(port: number): Redis;
  /** Kills the master (SIGKILL); resolves the new master's port once the sentinels have promoted it. */
  killMaster(): Promise<number>;
  /** Freezes (SIGSTOP) or thaws (SIGCONT) the data server on `port`, as a stalled host would. */
  pause(port: number): void;
  resume(port: number): void;
  /** Closes every connection, stops every process and removes the temp dir. */
  stop(): Promise<void>;
}

/** Shape of the group. */
export interface SentinelGroupOptions {
  /** Replicas of the primary. @default 2 */
  replicas?: number;
  /** Sentinels; 0 makes a plain primary/replica group. @default 3 */
  sentinels?: number;
  /** Extra options of the primary and the replicas, e.g. `['--appendonly', 'yes']`. @default none */
  args?: readonly string[];
}

const HOST = '127.0.0.1';
const NAME = 'ioredisson';
/** Generous bounds: the machine running the tests may be loaded. */
const READY_TIMEOUT = 20_000;
const SETTLE_TIMEOUT = 30_000;

/**
 * Starts a primary, `replicas` replicas of it and `sentinels` sentinels (quorum: a majority; master
 * down after 1 s), and waits until every replica is in sync and every sentinel sees the replicas and
 * the other sentinels, ready to fail over.
 */
export async function startSentinel(options: SentinelGroupOptions = {}): Promise<TestSentinel> {
  const replicaCount = options.replicas ?? 2;
  const sentinelCount = options.sentinels ?? 3;
  const dir = await mkdtemp(join(tmpdir(), 'ioredisson-sentinel-'));
  const servers = new Map<number, ServerProcess>();
  const processes: ServerProcess[] = [];
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

  const ports: number[] = [];
  const sentinelPorts: number[] = [];
  const sentinels: Redis[] = [];
  try {
    for (let i = 0; i <= replicaCount; i++) ports.push(await freePort());
    for (const [i, port] of ports.entries()) {
      const replicaOf = i === 0 ? [] : ['--replicaof', HOST, String(ports[0])];
      const args = [
        '--port', String(port), '--bind', HOST, '--save', '', '--appendonly', 'no', '--dir', dir,
        '--dbfilename', `dump-${port}.rdb`, ...aofFileArgs(port), ...debugCommandArgs(), '--repl-diskless-sync-delay', '0',
        ...replicaOf, ...(options.args ?? []),
      ];
      const child = await spawnRedis(args, port, READY_TIMEOUT);
      processes.push(child);
      servers.set(port, child);
    }
    const quorum = Math.floor(sentinelCount / 2) + 1;
    for (let i = 0; i < sentinelCount; i++) {
      const port = await freePort();
      sentinelPorts.push(port);
      const config = join(dir, `sentinel-${port}.conf`);
      await writeFile(
        config,
        [
          `port ${port}`,
          `bind ${HOST}`,
          `dir ${dir}`,
          `sentinel monitor ${NAME} ${HOST} ${ports[0]} ${quorum}`,
          `sentinel down-after-milliseconds ${NAME} 1000`,
          `sentinel failover-timeout ${NAME} 5000`,
          '',
        ].join('\n'),
      );
      processes.push(await spawnRedis([config, '--sentinel'], port, READY_TIMEOUT, '+monitor master'));
      sentinels.push(track(new Redis({ host: HOST, port, maxRetriesPerRequest: null })));
    }
    const primary = track(new Redis({ host: HOST, port: ports[0], maxRetriesPerRequest: null }));
    await settled(() => replicasCaughtUp(primary, replicaCount), `${replicaCount} replica(s) in sync with the primary`);
    for (const sentinel of sentinels) {
      await settled(
        async () => (await replicasInSync(sentinel)) === replicaCount && (await otherSentinels(sentinel)) === sentinelCount - 1,
        'every sentinel to see the replicas in sync and the other sentinels',
      );
    }
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }

  const masterPort = async (): Promise<number> => {
    if (sentinels.length === 0) return ports[0]!;
    const [, port] = (await sentinels[0]!.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', NAME)) as [string, string];
    return Number(port);
  };
  const newMaster = async (old: number): Promise<number> => {
    await settled(() => masterPort().then((port) => port !== old), 'the sentinels to name a new master');
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
  const serverOn = (port: number): ServerProcess => {
    const child = servers.get(port);
    if (!child) throw new Error(`no server of this group on port ${port}`);
    return child;
  };

  return {
    ports,
    sentinelPorts,
    name: NAME,
    masterPort,
    connect: (options = {}) =>
      track(
        sentinels.length === 0
          ? new Redis({ host: HOST, port: ports[0], maxRetriesPerRequest: null, ...options })
          : new Redis({
              sentinels: sentinelPorts.map((port) => ({ host: HOST, port })),
              name: NAME,
              maxRetriesPerRequest: null,
              ...options,
            }),
      ),
    // A short disconnectTimeout: ioredis keeps a timer of that length after disconnecting a connection
    // whose server was killed, which would hold the test run open.
    direct: (port) => track(new Redis({ host: HOST, port, maxRetriesPerRequest: null, disconnectTimeout: 100 })),
    async killMaster() {
      if (sentinels.length === 0) throw new Error('no sentinel would promote a replica');
      const old = await masterPort();
      await stopProcess(serverOn(old), 'SIGKILL');
      return newMaster(old);
    },
    pause: (port) => void serverOn(port).kill('SIGSTOP'),
    resume: (port) => void serverOn(port).kill('SIGCONT'),
    stop,
  };
}

/** Whether the primary has `count` replicas online whose offset has reached its own. */
export async function replicasCaughtUp(primary: Redis, count: number): Promise<boolean> {
  const info = await primary.info('replication');
  const offset = Number(/^master_repl_offset:(\d+)/m.exec(info)?.[1] ?? -1);
  const replicas = [...info.matchAll(/^slave\d+:.*state=(\w+),offset=(\d+)/gm)];
  return replicas.filter(([, state, at]) => state === 'online' && Number(at) >= offset).length >= count;
}

/** Replicas the sentinel reports with their link to the master up. */
async function replicasInSync(sentinel: Redis): Promise<number> {
  const replicas = (await sentinel.call('SENTINEL', 'REPLICAS', NAME)) as string[][];
  return replicas.filter((fields) => {
    const info = fieldsOf(fields);
    return info.get('master-link-status') === 'ok' && !info.get('flags')?.includes('disconnected');
  }).length;
}

/** Other sentinels this sentinel has discovered. */
async function otherSentinels(sentinel: Redis): Promise<number> {
  const master = fieldsOf((await sentinel.call('SENTINEL', 'MASTER', NAME)) as string[]);
  return Number(master.get('num-other-sentinels') ?? 0);
}

function fieldsOf(fields: string[]): Map<string, string> {
  const info = new Map<string, string>();
  for (let i = 0; i + 1 < fields.length; i += 2) info.set(fields[i]!, fields[i + 1]!);
  return info;
}

/** Waits for `check` to hold (a rejection counts as not yet), within {@link SETTLE_TIMEOUT}. */
function settled(check: () => Promise<boolean>, what: string): Promise<void> {
  return eventually(() => check().catch(() => false), SETTLE_TIMEOUT, what);
}
