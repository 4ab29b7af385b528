import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis, { type RedisOptions } from 'ioredis';
import { spawnRedis, stopProcess, type ServerProcess } from './redis-process';
import { debugCommandArgs } from './server-source';

/** Longest wait for a server to start, in ms: generous, the machine running the tests may be loaded. */
const READY_TIMEOUT = 20_000;

/** A Redis server for one test file: a throwaway `redis-server`, or the one `REDIS_URL` names. */
export interface TestRedis {
  readonly url: string;
  /** A new connection; closed by `stop()`. */
  connect(options?: RedisOptions): Redis;
  /** Closes every connection made by `connect` and stops the server if this helper started it. */
  stop(): Promise<void>;
  /**
   * Kills the server (SIGKILL, as a crash would) and starts a new one on the same port: empty, or
   * with what its append-only file kept when started with `appendOnly`.
   * @param downMs how long the port stays closed in between.
   * @default 0
   */
  restart(downMs?: number): Promise<void>;
}

/** Settings of {@link startRedis}. */
export interface StartRedisOptions {
  /**
   * Persist every write to an append-only file in a temporary directory, fsynced before the reply
   * (`--appendonly yes --appendfsync always`), so that a restart loses nothing acknowledged.
   * @default false
   */
  appendOnly?: boolean;
  /** More server options, e.g. `['--appendonly', 'yes', '--dir', dir]`. @default [] */
  args?: readonly string[];
}

/** Starts `redis-server` on a free loopback port (no persistence by default), or uses `REDIS_URL` when set. */
export async function startRedis(options: StartRedisOptions = {}): Promise<TestRedis> {
  const external = process.env.REDIS_URL;
  let server: ServerProcess | undefined;
  let url: string;
  const port = external ? 0 : await freePort();
  const dir = options.appendOnly && !external ? mkdtempSync(join(tmpdir(), 'ioredisson-aof-')) : undefined;
  const persistence = dir ? ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', dir] : ['--appendonly', 'no'];
  const launch = async (): Promise<void> => {
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persistence, ...debugCommandArgs(), ...(options.args ?? [])];
    server = await spawnRedis(args, port, READY_TIMEOUT);
  };
  const kill = async (signal: NodeJS.Signals): Promise<void> => {
    if (server) await stopProcess(server, signal);
  };
  if (external) {
    url = external;
  } else {
    await launch();
    url = `redis://127.0.0.1:${port}`;
  }
  const connections: Redis[] = [];
  return {
    url,
    connect(options = {}) {
      const redis = new Redis(url, { maxRetriesPerRequest: null, ...options });
      redis.on('error', () => undefined);
      connections.push(redis);
      return redis;
    },
    async stop() {
      // A connection the test ended already is left alone: disconnecting it again would arm ioredis'
      // 2 s disconnect timer on a socket that closed before, keeping the process alive after the run.
      // One still running its ready check is let finish first: disconnected, its INFO fails, and
      // ioredis disconnects it once more, arming that timer too.
      await Promise.all(connections.map((redis) => readyOrClosed(redis)));
      for (const redis of connections) if (redis.status !== 'end') redis.disconnect();
      await kill('SIGTERM');
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
    async restart(downMs = 0) {
      if (external) throw new Error('Cannot restart the server REDIS_URL names');
      await kill('SIGKILL');
      await new Promise((resolve) => setTimeout(resolve, downMs));
      await launch();
    },
  };
}

/** Longest wait in `stop()` for a connection to finish connecting, ms. */
const SETTLE_TIMEOUT = 2_000;

/** Resolves once `redis` is not connecting any more (ready, closed, or waiting to reconnect), or after `SETTLE_TIMEOUT`. */
function readyOrClosed(redis: Redis): Promise<void> {
  if (redis.status !== 'connecting' && redis.status !== 'connect') return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      for (const event of SETTLED) redis.off(event, done);
      resolve();
    };
    const timer = setTimeout(done, SETTLE_TIMEOUT);
    for (const event of SETTLED) redis.once(event, done);
  });
}

/** The events after which a connection is not connecting any more. */
const SETTLED = ['ready', 'close', 'end', 'reconnecting'] as const;

/** A loopback TCP port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.unref();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** Whether nobody listens on loopback `port` right now. */
export function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.unref();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/** Calls of each Redis command so far, from `INFO commandstats` (lower-case names). */
export async function commandCounts(redis: Redis): Promise<Map<string, number>> {
  const info = await redis.info('commandstats');
  const counts = new Map<string, number>();
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    counts.set(match[1]!, Number(match[2]));
  }
  return counts;
}

/**
 * Commands called between two `commandCounts` snapshots, ignoring the named ones: by default `info`
 * (ioredis's ready check, and the snapshots themselves) and `client|setinfo`, which ioredis sends as a
 * connection opens and servers that have it count (Redis 7.2+, Valkey).
 */
export function commandsBetween(
  before: Map<string, number>,
  after: Map<string, number>,
  ignore: readonly string[] = ['info', 'client|setinfo'],
): Record<string, number> {
  const delta: Record<string, number> = {};
  for (const [name, calls] of after) {
    const diff = calls - (before.get(name) ?? 0);
    if (diff > 0 && !ignore.includes(name)) delta[name] = diff;
  }
  return delta;
}

/** Polls `check` until it returns true or `timeoutMs` passes; rejects on time-out. */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 5_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Connections subscribed to `channel` (PUBSUB NUMSUB). */
export async function subscriberCount(redis: Redis, channel: string): Promise<number> {
  const [, count] = (await redis.pubsub('NUMSUB', channel)) as [string, number];
  return Number(count);
}

/** Waits until nobody is subscribed to `channel` (the last waiter unsubscribes a moment after leaving). */
export function expectUnsubscribed(redis: Redis, channel: string): Promise<void> {
  return eventually(async () => (await subscriberCount(redis, channel)) === 0, 5_000, `no subscriber on ${channel}`);
}
