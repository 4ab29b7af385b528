import Redis, { type RedisOptions } from 'ioredis';
import { makeCertificates, tlsServerArgs } from './certificates';
import { commandCounts, freePort } from './redis-server';
import { spawnRedis, stopProcess } from './redis-process';
import { channelsOn, clusterTopology, subscribersOn, type Topology } from './topology';

/**
 * A standalone server that speaks TLS only: every connection a test or the library makes (the
 * library's own subscriber included) must go over TLS, or it gets nothing. `connect` trusts the
 * test CA; child processes trust it through `NODE_EXTRA_CA_CERTS`, which this sets for them.
 */
export const TLS_STANDALONE: Topology = {
  name: 'standalone over TLS',
  async start() {
    const certificates = makeCertificates();
    process.env.NODE_EXTRA_CA_CERTS = certificates.caFile;
    const port = await freePort();
    const server = await spawnRedis(
      [...tlsServerArgs(certificates, port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      port,
      20_000,
    );
    const connections: Redis[] = [];
    const connect = (options: RedisOptions = {}) => {
      const redis = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: null, ...options, tls: { ca: certificates.ca } });
      redis.on('error', () => undefined);
      connections.push(redis);
      return redis;
    };
    const admin = connect();
    return {
      target: `rediss://127.0.0.1:${port}`,
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
      stop: async () => {
        for (const redis of connections) redis.disconnect();
        await stopProcess(server);
        certificates.remove();
      },
    };
  },
};

/**
 * A Cluster of three primaries with one replica each that speaks TLS only: clients, the cluster bus
 * and replication. Child processes trust the test CA through `NODE_EXTRA_CA_CERTS`.
 */
export const TLS_CLUSTER: Topology = {
  name: 'Cluster with replicas over TLS',
  async start() {
    const certificates = makeCertificates();
    process.env.NODE_EXTRA_CA_CERTS = certificates.caFile;
    const deployment = await clusterTopology({ masters: 3, replicas: 1, tls: certificates }).start();
    return {
      ...deployment,
      stop: async () => {
        await deployment.stop();
        certificates.remove();
      },
    };
  },
};
