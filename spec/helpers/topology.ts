import Redis, { type Cluster, type RedisOptions } from 'ioredis';
import { RedissonClient, type RedisConnection, type RedissonOptions } from '../../lib';
import { startCluster, type ClusterShape } from './cluster';
import { commandCounts, startRedis } from './redis-server';
import { startSentinel, type SentinelGroupOptions } from './sentinel';

/**
 * A running deployment the contract suites drive: one standalone server, a Cluster, a Sentinel
 * group. Everything a suite observes (keys, subscribers, command counts) is summed over the nodes
 * that serve data, so the same assertion holds whatever the topology.
 */
export interface Deployment {
  /** What a child process needs to connect: a `redis://` URL, or JSON (`{ cluster }`, `{ sentinels, name }`). */
  readonly target: string;
  /** A new connection for a client, as a user would make it; closed by `stop()`. */
  connect(options?: RedisOptions): RedisConnection;
  /** A connection for plain commands (GET, DEL) on any key. */
  admin(): RedisConnection;
  /** Every key on every primary, sorted. */
  keys(): Promise<string[]>;
  /** Subscribers of `channel`, classic and sharded, over every node. */
  subscribers(channel: string): Promise<number>;
  /** Channels matching `pattern` with a subscriber, classic and sharded, over every node, sorted. */
  channels(pattern: string): Promise<string[]>;
  /** Calls of each command so far, summed over the primaries. */
  commandCounts(): Promise<Map<string, number>>;
  /** Deletes every key and cached script on every primary. */
  flush(): Promise<void>;
  stop(): Promise<void>;
}

/** A way to start a {@link Deployment}; `name` goes into test titles. */
export interface Topology {
  readonly name: string;
  start(): Promise<Deployment>;
}

/** One `redis-server` (or `REDIS_URL`). */
export const STANDALONE: Topology = {
  name: 'standalone',
  async start() {
    const server = await startRedis();
    return singleServer(server.url, (options) => server.connect(options), () => server.stop());
  },
};

/** The deployment of one server at `target`, reached by `connect` (its first connection is the admin's). */
export function singleServer(target: string, connect: (options?: RedisOptions) => Redis, stop: () => Promise<void>): Deployment {
  const admin = connect();
  return {
    target,
    connect,
    admin: () => admin,
    keys: async () => (await admin.keys('*')).sort(),
    subscribers: (channel) => subscribersOn([admin], channel),
    channels: (pattern) => channelsOn([admin], pattern),
    commandCounts: () => commandCounts(admin),
    flush: async () => {
      await admin.flushall();
      await admin.script('FLUSH');
    },
    stop,
  };
}

/** A Redis Cluster, by default three primaries with one replica each. */
export function clusterTopology(shape: ClusterShape = { masters: 3, replicas: 1 }, name = 'Cluster with replicas'): Topology {
  return {
    name,
    async start() {
      const cluster = await startCluster(shape);
      const admin = cluster.connect();
      const primaries = async () => (await cluster.primaries()).map((port) => cluster.direct(port));
      return {
        target: JSON.stringify({ cluster: cluster.nodes, ...(shape.tls ? { tls: true } : {}) }),
        connect: (options) => cluster.connect({ redisOptions: options }),
        admin: () => admin,
        keys: async () => (await Promise.all((await primaries()).map((node) => node.keys('*')))).flat().sort(),
        subscribers: async (channel) => subscribersOn(cluster.all.map((node) => cluster.direct(node.port)), channel),
        channels: async (pattern) => channelsOn(cluster.all.map((node) => cluster.direct(node.port)), pattern),
        commandCounts: async () => sumCounts(await Promise.all((await primaries()).map((node) => commandCounts(node)))),
        flush: async () => {
          for (const node of await primaries()) {
            await node.flushall();
            await node.script('FLUSH');
          }
        },
        stop: () => cluster.stop(),
      };
    },
  };
}

/** A Sentinel group, by default one primary, two replicas and three sentinels. */
export function sentinelTopology(shape: SentinelGroupOptions = {}, name = 'Sentinel'): Topology {
  return {
    name,
    async start() {
      const group = await startSentinel(shape);
      const primary = async () => group.direct(await group.masterPort());
      const admin = group.connect();
      return {
        target: JSON.stringify({ sentinels: group.sentinelPorts.map((port) => ({ host: '127.0.0.1', port })), name: group.name }),
        connect: (options) => group.connect(options),
        admin: () => admin,
        keys: async () => (await (await primary()).keys('*')).sort(),
        subscribers: async (channel) => subscribersOn([await primary()], channel),
        channels: async (pattern) => channelsOn([await primary()], pattern),
        commandCounts: async () => commandCounts(await primary()),
        flush: async () => {
          const node = await primary();
          await node.flushall();
          await node.script('FLUSH');
        },
        stop: () => group.stop(),
      };
    },
  };
}

/**
 * Per-file set-up on `topology`: one deployment for the file, flushed before each test, clients
 * shut down after each test.
 */
export function useTopology(topology: Topology): {
  readonly name: string;
  deployment: () => Deployment;
  client: (options?: RedissonOptions, connection?: RedisOptions) => RedissonClient;
} {
  let deployment: Deployment;
  let clients: RedissonClient[] = [];
  beforeAll(async () => {
    deployment = await topology.start();
  }, 180_000);
  beforeEach(async () => {
    // Keys and cached scripts alike: a test that counts EVALSHA calls must not depend on which
    // tests ran before it.
    await deployment.flush();
  });
  afterEach(async () => {
    await Promise.all(clients.map((c) => c.shutdown()));
    clients = [];
  });
  afterAll(async () => {
    await deployment?.stop();
  }, 60_000);
  return {
    name: topology.name,
    deployment: () => deployment,
    client: (options, connection) => {
      const client = new RedissonClient(deployment.connect(connection), options);
      clients.push(client);
      return client;
    },
  };
}

/** Subscribers of `channel`, classic and sharded, over `nodes` (one that fails counts none). */
export async function subscribersOn(nodes: Redis[], channel: string): Promise<number> {
  let total = 0;
  for (const node of nodes) {
    const [, classic] = (await node.pubsub('NUMSUB', channel).catch(() => [channel, 0])) as [string, number];
    const [, sharded] = (await node.call('PUBSUB', 'SHARDNUMSUB', channel).catch(() => [channel, 0])) as [string, number];
    total += Number(classic) + Number(sharded);
  }
  return total;
}

/** Channels matching `pattern` with a subscriber, classic and sharded, over `nodes` (one that fails counts none), sorted. */
export async function channelsOn(nodes: Redis[], pattern: string): Promise<string[]> {
  const found = new Set<string>();
  for (const node of nodes) {
    for (const sub of ['CHANNELS', 'SHARDCHANNELS']) {
      const names = (await node.call('PUBSUB', sub, pattern).catch(() => [])) as string[];
      for (const name of names) found.add(String(name));
    }
  }
  return [...found].sort();
}

function sumCounts(all: Map<string, number>[]): Map<string, number> {
  const total = new Map<string, number>();
  for (const counts of all) for (const [name, calls] of counts) total.set(name, (total.get(name) ?? 0) + calls);
  return total;
}

export type { Cluster };
