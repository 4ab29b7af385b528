import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import calculateSlot from 'cluster-key-slot';
import Redis, { Cluster, type ClusterOptions } from 'ioredis';
import { tlsServerArgs, trusting, type TestCertificates } from './certificates';
import { eventually, freePort, isFree } from './redis-server';
import { spawnRedis, stopProcess, type ServerProcess } from './redis-process';
import { cliBinary, debugCommandArgs, hasRedis7Options } from './server-source';
import { replicasCaughtUp } from './sentinel';

/** One node of a test cluster. */
export interface ClusterNode {
  readonly host: string;
  readonly port: number;
}

/** A throwaway Redis Cluster for one test file. */
export interface TestCluster {
  /** The masters as created, in creation order (after a failover, see `primaries()`). */
  readonly nodes: readonly ClusterNode[];
  /** Every node started, masters and replicas. */
  readonly all: readonly ClusterNode[];
  /**
   * A new cluster connection (`maxRetriesPerRequest: null`); closed by `stop()`. `options` are
   * merged over the defaults (e.g. `{ shardedSubscribers: true }`).
   */
  connect(options?: ClusterOptions): Cluster;
  /** A direct connection to the node on `port` (kept; closed by `stop()`). */
  direct(port: number): Redis;
  /** Ports of the live primaries serving slots now, from `CLUSTER NODES`. */
  primaries(): Promise<number[]>;
  /** Port of the primary serving `slot` now. */
  ownerOf(slot: number): Promise<number>;
  /** Port of a live replica of the primary on `port`. */
  replicaOf(port: number): Promise<number>;
  /** Kills the node on `port` (SIGKILL). */
  kill(port: number): Promise<void>;
  /** Freezes (SIGSTOP) or thaws (SIGCONT) the node on `port`. */
  pause(port: number): void;
  resume(port: number): void;
  /** Runs `CLUSTER FAILOVER` on the replica on `port`; waits until it serves as primary and its primary turned replica. */
  failover(replicaPort: number): Promise<void>;
  /** Waits until the primary on `port` is replaced by one of its replicas (after `kill`). */
  promotedAfter(port: number): Promise<number>;
  /** Moves `slot` (with its keys) to the primary on `toPort`, as `redis-cli --cluster reshard` does. */
  moveSlot(slot: number, toPort: number): Promise<void>;
  /** Waits until every live node reports `cluster_state:ok` and every replica is in sync. */
  settle(): Promise<void>;
  /** Closes every connection made by `connect`, kills every node and removes the temp dir. */
  stop(): Promise<void>;
}

/** Shape of a test cluster. */
export interface ClusterShape {
  /** Masters. @default 3 */
  masters?: number;
  /** Replicas per master. @default 0 */
  replicas?: number;
  /** `cluster-node-timeout` in ms: how long a dead primary goes unnoticed. @default 15000 */
  nodeTimeout?: number;
  /**
   * Serve TLS only, with these certificates: clients, the cluster bus and replication alike (no
   * plain port at all). Every connection the helper makes trusts their CA.
   */
  tls?: TestCertificates;
}

const HOST = '127.0.0.1';
/** Where a server without `--cluster-port` puts its cluster bus: its port plus this. */
const BUS_OFFSET = 10_000;
/** Generous bounds: the machine running the tests may be loaded. */
const READY_TIMEOUT = 20_000;
const CREATE_TIMEOUT = 60_000;
const CONVERGE_TIMEOUT = 30_000;
const FAILOVER_TIMEOUT = 60_000;
/** Longer than Redis' manual-failover timeout (5 s): a `CLUSTER FAILOVER` not done by then was aborted. */
const MANUAL_FAILOVER_MS = 8_000;

/**
 * Starts `masters * (1 + replicas)` `redis-server` nodes with cluster mode on free loopback ports
 * (bus ports chosen freely too, so that `port + 10000` overflowing is never an issue), creates a
 * cluster of them with `redis-cli --cluster create --cluster-replicas <replicas>` and waits until
 * every node reports `cluster_state:ok` and every replica has caught up with its primary.
 */
export async function startCluster(shape: ClusterShape | number = {}): Promise<TestCluster> {
  const { masters = 3, replicas = 0, nodeTimeout = 15_000, tls } = typeof shape === 'number' ? { masters: shape } : shape;
  const tlsOptions = tls ? { tls: trusting(tls) } : {};
  const dir = await mkdtemp(join(tmpdir(), 'ioredisson-cluster-'));
  const processes = new Map<number, ServerProcess>();
  const all: ClusterNode[] = [];
  const nodes: ClusterNode[] = [];
  const connections: Cluster[] = [];
  const directs = new Map<number, Redis>();
  const dead = new Set<number>();

  const stop = async (): Promise<void> => {
    for (const connection of connections.splice(0)) connection.disconnect();
    for (const redis of directs.values()) redis.disconnect();
    directs.clear();
    await Promise.all([...processes.values()].map((child) => stopProcess(child)));
    processes.clear();
    await rm(dir, { recursive: true, force: true });
  };
  const direct = (port: number): Redis => {
    let redis = directs.get(port);
    if (!redis) {
      redis = new Redis({ host: HOST, port, maxRetriesPerRequest: 1, disconnectTimeout: 100, retryStrategy: () => 200, ...tlsOptions });
      redis.on('error', () => undefined);
      directs.set(port, redis);
    }
    return redis;
  };
  const live = (): number[] => all.map((n) => n.port).filter((port) => !dead.has(port));
  const clusterNodes = async (): Promise<ClusterNodeLine[]> => {
    let lastError: unknown;
    for (const port of live()) {
      try {
        return parseClusterNodes(String(await direct(port).cluster('NODES')));
      } catch (error) {
        lastError = error;
      }
    }
    throw lastError;
  };
  /** `minReplicas`: replicas every primary must have in sync (CLUSTER NODES may not list them yet). */
  const settle = async (minReplicas = 0): Promise<void> => {
    await waitForClusterOk(live().map((port) => ({ host: HOST, port })), tlsOptions);
    await eventually(
      async () => {
        const lines = await clusterNodes().catch(() => []);
        for (const line of lines) {
          if (!line.flags.includes('master') || line.flags.includes('fail') || dead.has(line.port)) continue;
          if (line.slots.length === 0) continue;
          const listed = lines.filter((l) => l.masterId === line.id && !l.flags.includes('fail') && !dead.has(l.port)).length;
          const expected = Math.max(listed, minReplicas);
          if (!(await replicasCaughtUp(direct(line.port), expected).catch(() => false))) return false;
        }
        return lines.length > 0;
      },
      CONVERGE_TIMEOUT,
      'every replica to catch up with its primary',
    );
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
    // Redis 6.2 has no --cluster-port: its bus listens on port + 10000, which must be free as well.
    const fixedBus = !hasRedis7Options();
    const nodePort = async (): Promise<number> => {
      for (;;) {
        const port = await distinctPort();
        if (!fixedBus || (port + BUS_OFFSET <= 65_535 && !ports.has(port + BUS_OFFSET) && (await isFree(port + BUS_OFFSET)))) return port;
      }
    };
    for (let i = 0; i < masters * (1 + replicas); i++) {
      const port = await nodePort();
      if (fixedBus) ports.add(port + BUS_OFFSET);
      const busArgs = fixedBus ? [] : ['--cluster-port', String(await distinctPort())];
      all.push({ host: HOST, port });
      const portArgs = tls ? [...tlsServerArgs(tls, port), '--tls-cluster', 'yes', '--tls-replication', 'yes'] : ['--port', String(port)];
      const args = [
        ...portArgs,
        ...busArgs,
        '--bind', HOST,
        '--cluster-enabled', 'yes',
        '--cluster-config-file', join(dir, `nodes-${port}.conf`),
        '--cluster-node-timeout', String(nodeTimeout),
        '--dir', dir,
        '--dbfilename', `dump-${port}.rdb`,
        '--save', '',
        '--appendonly', 'no',
        ...debugCommandArgs(),
        '--repl-diskless-sync-delay', '0',
      ];
      processes.set(port, await spawnRedis(args, port, READY_TIMEOUT));
    }

    const addresses = all.map((n) => `${n.host}:${n.port}`);
    const cliTls = tls ? ['--tls', '--cacert', tls.caFile] : [];
    const create = [...cliTls, '--cluster', 'create', ...addresses, '--cluster-replicas', String(replicas), '--cluster-yes'];
    // Servers in containers: the image's own redis-cli, as no local one may exist.
    const first = processes.get(all[0]!.port)!;
    await (first.run ? first.run(['redis-cli', ...create]) : run(cliBinary(), create, CREATE_TIMEOUT));
    await settle(replicas);
    const lines = await clusterNodes();
    for (const node of all) if (lines.find((l) => l.port === node.port)?.flags.includes('master')) nodes.push(node);
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }

  const primaries = async (): Promise<number[]> =>
    (await clusterNodes())
      .filter((l) => l.flags.includes('master') && !l.flags.includes('fail') && l.slots.length > 0 && !dead.has(l.port))
      .map((l) => l.port);
  const ownerOf = async (slot: number): Promise<number> => {
    const line = (await clusterNodes()).find(
      (l) => l.flags.includes('master') && !l.flags.includes('fail') && l.slots.some(([from, to]) => from <= slot && slot <= to),
    );
    if (!line) throw new Error(`no primary serves slot ${slot}`);
    return line.port;
  };
  const processOn = (port: number): ServerProcess => {
    const child = processes.get(port);
    if (!child) throw new Error(`no node of this cluster on port ${port}`);
    return child;
  };

  return {
    nodes,
    all,
    connect(options = {}) {
      const cluster = new Cluster(nodes.map((n) => ({ host: n.host, port: n.port })), {
        ...options,
        redisOptions: { maxRetriesPerRequest: null, ...tlsOptions, ...options.redisOptions },
      });
      cluster.on('error', () => undefined);
      connections.push(cluster);
      return cluster;
    },
    direct,
    primaries,
    ownerOf,
    async replicaOf(port) {
      // The primary's own view: CLUSTER NODES on another node may not list its replicas yet.
      const info = await direct(port).info('replication');
      for (const [, replica, state] of info.matchAll(/^slave\d+:ip=[^,]+,port=(\d+),state=(\w+)/gm)) {
        if (state === 'online' && !dead.has(Number(replica))) return Number(replica);
      }
      throw new Error(`no live replica of the primary on ${port}`);
    },
    async kill(port) {
      dead.add(port);
      await stopProcess(processOn(port), 'SIGKILL');
    },
    pause: (port) => void processOn(port).kill('SIGSTOP'),
    resume: (port) => void processOn(port).kill('SIGCONT'),
    async failover(replicaPort) {
      // A primary ignores the replica's MFSTART until its own bus view lists it as its replica
      // (replication may be up before that), and a manual failover not done within 5 s is aborted
      // silently: wait for that view, and ask again while the replica has not taken over.
      const replica = direct(replicaPort);
      const [, host, primaryPort] = (await replica.role()) as [string, string, number];
      await eventually(
        async () => {
          const lines = parseClusterNodes(String(await direct(Number(primaryPort)).cluster('NODES')));
          const myself = lines.find((l) => l.flags.includes('myself'))!;
          return lines.some((l) => l.port === replicaPort && l.masterId === myself.id);
        },
        CONVERGE_TIMEOUT,
        `the primary on ${host}:${primaryPort} to list the replica on ${replicaPort}`,
      );
      // Done once the old primary turned replica as well: a replica that won an election a few seconds
      // earlier may take over on that election's votes, with an epoch the old primary overrules, and
      // turn back (Redis 7.0), the old primary holding its writes paused for 5 s.
      const roleOf = async (node: Redis): Promise<unknown> => (await node.role().catch(() => []))[0];
      const primary = direct(Number(primaryPort));
      const tookOver = async (): Promise<boolean> =>
        (await roleOf(replica)) === 'master' && (await roleOf(primary)) === 'slave';
      const deadline = performance.now() + FAILOVER_TIMEOUT;
      while (!(await tookOver())) {
        if (performance.now() > deadline) throw new Error(`the replica on ${replicaPort} did not take over within ${FAILOVER_TIMEOUT} ms`);
        await replica.cluster('FAILOVER').catch(() => undefined); // refused while one is under way
        await eventually(tookOver, MANUAL_FAILOVER_MS, 'a manual failover').catch(() => undefined);
      }
      await settle();
    },
    async promotedAfter(port) {
      const lines = await clusterNodes();
      const id = lines.find((l) => l.port === port)!.id;
      const heirs = new Set(lines.filter((l) => l.masterId === id).map((l) => l.port));
      let promoted = 0;
      await eventually(
        async () => {
          const now = await clusterNodes().catch(() => []);
          const heir = now.find((l) => heirs.has(l.port) && l.flags.includes('master') && l.slots.length > 0);
          promoted = heir?.port ?? 0;
          return promoted !== 0;
        },
        FAILOVER_TIMEOUT,
        `a replica to replace the primary on ${port}`,
      );
      await settle();
      return promoted;
    },
    async moveSlot(slot, toPort) {
      const from = await ownerOf(slot);
      if (from === toPort) return;
      const lines = await clusterNodes();
      const idOf = (port: number): string => lines.find((l) => l.port === port)!.id;
      const source = direct(from);
      const target = direct(toPort);
      await target.cluster('SETSLOT', slot, 'IMPORTING', idOf(from));
      await source.cluster('SETSLOT', slot, 'MIGRATING', idOf(toPort));
      for (;;) {
        const keys = await source.cluster('GETKEYSINSLOT', slot, 100);
        if (keys.length === 0) break;
        await source.call('MIGRATE', HOST, toPort, '', 0, 10_000, 'KEYS', ...keys);
      }
      for (const port of [toPort, from, ...(await primaries()).filter((p) => p !== toPort && p !== from)]) {
        await direct(port).cluster('SETSLOT', slot, 'NODE', idOf(toPort));
      }
      await eventually(async () => (await ownerOf(slot).catch(() => 0)) === toPort, CONVERGE_TIMEOUT, `slot ${slot} on ${toPort}`);
      await settle();
    },
    settle: () => settle(),
    stop,
  };
}

/** A cluster of `shape` for the enclosing `describe` (or file): started before its tests, stopped after. */
export function useCluster(shape: ClusterShape): () => TestCluster {
  let cluster: TestCluster | undefined;
  beforeAll(async () => {
    cluster = await startCluster(shape);
  }, 180_000);
  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);
  return () => cluster!;
}

/** One line of `CLUSTER NODES`. */
interface ClusterNodeLine {
  id: string;
  port: number;
  flags: string;
  masterId: string;
  slots: [number, number][];
}

function parseClusterNodes(text: string): ClusterNodeLine[] {
  return text
    .trim()
    .split('\n')
    .map((line) => {
      const [id, address, flags, masterId, , , , , ...slots] = line.trim().split(' ');
      return {
        id: id!,
        port: Number(/:(\d+)/.exec(address!)?.[1]),
        flags: flags!,
        masterId: masterId!,
        slots: slots
          .filter((s) => !s.startsWith('['))
          .map((s) => {
            const [from, to] = s.split('-').map(Number);
            return [from!, to ?? from!] as [number, number];
          }),
      };
    });
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
async function waitForClusterOk(nodes: readonly ClusterNode[], tlsOptions: { tls?: { ca: Buffer } }): Promise<void> {
  const deadline = Date.now() + CONVERGE_TIMEOUT;
  const last = new Map<number, string>();
  for (const node of nodes) {
    const redis = new Redis({ host: node.host, port: node.port, lazyConnect: true, maxRetriesPerRequest: 1, ...tlsOptions });
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

/** Names `<prefix>-<i>`, one served by each primary of `cluster` (for tests that must touch every node). */
export async function namePerPrimary(cluster: TestCluster, prefix: string): Promise<string[]> {
  const byPort = new Map<number, string>();
  for (let i = 0; byPort.size < cluster.nodes.length; i++) {
    const name = `${prefix}-${i}`;
    const port = await cluster.ownerOf(calculateSlot(name));
    if (!byPort.has(port)) byPort.set(port, name);
  }
  return [...byPort.values()];
}
