import Redis, { type RedisOptions } from 'ioredis';
import { makeCertificates, tlsServerArgs } from './certificates';
import { freePort } from './redis-server';
import { spawnRedis, stopProcess } from './redis-process';
import { clusterTopology, singleServer, type Topology } from './topology';

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
      const redis = new Redis({
        host: '127.0.0.1',
        port,
        maxRetriesPerRequest: null,
        ...options,
        tls: { ca: certificates.ca },
      });
      redis.on('error', () => undefined);
      connections.push(redis);
      return redis;
    };
    return singleServer(`rediss://127.0.0.1:${port}`, connect, async () => {
      for (const redis of connections) redis.disconnect();
      await stopProcess(server);
      certificates.remove();
    });
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
