import Redis, { type RedisOptions } from 'ioredis';
import { spawnRedis, stopProcess, type ServerProcess } from './redis-process';
import { freePort } from './redis-server';

/** Longest wait for a server to start, in ms: generous on a loaded machine. */
const READY_TIMEOUT = 20_000;

/** One of several independent throwaway servers, which a test can stop and start again on its port. */
export interface StoppableRedis {
  readonly port: number;
  readonly url: string;
  /** Whether the server runs now. */
  readonly running: boolean;
  /** A new connection, closed by `close()`. */
  connect(options?: RedisOptions): Redis;
  /** Kills the server (SIGKILL: a crash, nothing persisted); it stays down until `start()`. */
  kill(): Promise<void>;
  /** Starts a fresh, empty server on the same port (no-op when running). */
  start(): Promise<void>;
  /** Closes every connection and stops the server. */
  close(): Promise<void>;
}

/** Starts `n` independent `redis-server`s on free loopback ports (no persistence). */
export async function startServers(n: number): Promise<StoppableRedis[]> {
  return Promise.all(Array.from({ length: n }, () => startStoppable()));
}

async function startStoppable(): Promise<StoppableRedis> {
  const port = await freePort();
  let child: ServerProcess | undefined;
  const connections: Redis[] = [];
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  const server: StoppableRedis = {
    port,
    url: `redis://127.0.0.1:${port}`,
    get running() {
      return child !== undefined;
    },
    connect(options = {}) {
      const redis = new Redis(server.url, { maxRetriesPerRequest: null, ...options });
      redis.on('error', () => undefined);
      connections.push(redis);
      return redis;
    },
    async kill() {
      const running = child;
      child = undefined;
      if (running) await stopProcess(running, 'SIGKILL');
    },
    async start() {
      if (!child) child = await spawnRedis(args, port, READY_TIMEOUT);
    },
    async close() {
      for (const redis of connections) redis.disconnect();
      await server.kill();
    },
  };
  await server.start();
  return server;
}
