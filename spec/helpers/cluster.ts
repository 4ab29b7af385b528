import { execFile, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis, { Cluster, type ClusterOptions } from 'ioredis';
import { freePort } from './redis-server';
import { spawnRedis, stopProcess } from './redis-process';

/** One node of a test cluster. */
export interface ClusterNode {
  readonly host: string;
  readonly port: number;
}

/** A throwaway Redis Cluster for one test file. */
export interface TestCluster {
  /** The masters, in creation order. */
  readonly nodes: readonly ClusterNode[];
  /**
   * A new cluster connection (`maxRetriesPerRequest: null`); closed by `stop()`. `options` are
   * merged over the defaults (e.g. `{ shardedSubscribers: true }`).
   */
  connect(options?: ClusterOptions): Cluster;
  /** Closes every connection made by `connect`, kills every node and removes the temp dir. */
  stop(): Promise<void>;
}

const HOST = '127.0.0.1';
/** Generous bounds: the machine running the tests may be loaded. */
const READY_TIMEOUT = 20_000;
const CREATE_TIMEOUT = 60_000;
const CONVERGE_TIMEOUT = 30_000;

/**
 * Starts three `redis-server` masters with cluster mode on free loopback ports (bus ports chosen
 * freely too, so that `port + 10000` overflowing is never an issue), creates a cluster of them with
 * `redis-cli --cluster create` and waits until every node reports `cluster_state:ok`.
 */
export async function startCluster(size = 3): Promise<TestCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'ioredisson-cluster-'));
  const processes: ChildProcess[] = [];
  const nodes: ClusterNode[] = [];
  const connections: Cluster[] = [];

  const stop = async (): Promise<void> => {
    for (const connection of connections.splice(0)) connection.disconnect();
    await Promise.all(processes.splice(0).map((child) => stopProcess(child)));
    await rm(dir, { recursive: true, force: true });
  };

  try {
    const ports = new Set<number>();
    const distinctPort = async (): Promise<number> => {
      for (;;) {
        const port = await freePort();
        if (!ports.has(port)) {
          ports.add(port);
          return port;
        }
      }
    };
    for (let i = 0; i < size; i++) {
      const port = await distinctPort();
      const busPort = await distinctPort();
      nodes.push({ host: HOST, port });
      const args = [
        '--port', String(port),
        '--cluster-port', String(busPort),
        '--bind', HOST,
        '--cluster-enabled', 'yes',
        '--cluster-config-file', join(dir, `nodes-${port}.conf`),
        '--cluster-node-timeout', '15000',
        '--dir', dir,
        '--save', '',
        '--appendonly', 'no',
      ];
      processes.push(await spawnRedis(args, port, READY_TIMEOUT));
    }

    const addresses = nodes.map((n) => `${n.host}:${n.port}`);
    await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes'], CREATE_TIMEOUT);
    await waitForClusterOk(nodes);
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }

  return {
    nodes,
    connect(options = {}) {
      const cluster = new Cluster(nodes.map((n) => ({ host: n.host, port: n.port })), {
        ...options,
        redisOptions: { maxRetriesPerRequest: null, ...options.redisOptions },
      });
      cluster.on('error', () => undefined);
      connections.push(cluster);
      return cluster;
    },
    stop,
  };
}

/** Runs a command to completion; rejects with its output when it fails or overruns. */
function run(command: string, args: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: timeoutMs, killSignal: 'SIGKILL' }, (error, stdout, stderr) => {
      if (error) {
        const how = error.killed ? `killed after ${timeoutMs} ms` : `failed (${error.message.split('\n')[0]})`;
        reject(new Error(`${command} ${args.join(' ')} ${how}:\n${stdout}${stderr}`));
      } else {
        resolve(stdout);
      }
    });
  });
}

/** Polls `CLUSTER INFO` on every node until all of them report `cluster_state:ok`. */
async function waitForClusterOk(nodes: readonly ClusterNode[]): Promise<void> {
  const deadline = Date.now() + CONVERGE_TIMEOUT;
  const last = new Map<number, string>();
  for (const node of nodes) {
    const redis = new Redis({ host: node.host, port: node.port, lazyConnect: true, maxRetriesPerRequest: 1 });
    redis.on('error', () => undefined);
    try {
      for (;;) {
        const info = await redis.cluster('INFO').catch((error: Error) => `error: ${error.message}`);
        last.set(node.port, String(info));
        if (/^cluster_state:ok\r?$/m.test(String(info))) break;
        if (Date.now() > deadline) {
          const states = [...last].map(([port, text]) => `${port}: ${/cluster_state:\w+/.exec(text)?.[0] ?? text}`);
          throw new Error(`Redis Cluster not ok after ${CONVERGE_TIMEOUT} ms (${states.join(', ')})`);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      redis.disconnect();
    }
  }
}
