// A throwaway Redis Cluster of primaries on loopback ports (no replicas, no persistence), for the
// cluster-slots scenario: `redis-cli --cluster create`, then every node reporting `cluster_state:ok`.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Redis from 'ioredis';
import { freePort, startRedis } from './redis-server.mjs';
import { until } from './stats.mjs';

const HOST = '127.0.0.1';

/**
 * Starts `primaries` cluster-enabled servers and joins them into one cluster, the slots split evenly.
 * Resolves `{ nodes, admins, stop }`: `nodes` as `{ host, port }` (for `new Cluster(nodes)`), `admins`
 * a direct connection to each node (INFO, CLIENT LIST, FLUSHALL). The runner's killAll() stops the
 * servers if `stop` is not called.
 */
export async function startCluster(primaries = 3) {
  const dir = mkdtempSync(join(tmpdir(), 'ioredisson-bench-cluster-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const servers = [];
  for (let i = 0; i < primaries; i++) {
    // The bus port is chosen before the server's own: the two may collide, rarely; try again then.
    for (let attempt = 1; ; attempt++) {
      const bus = await freePort();
      const args = [
        '--cluster-enabled',
        'yes',
        '--cluster-port',
        String(bus),
        '--cluster-config-file',
        `nodes-${i}.conf`,
        '--dir',
        dir,
      ];
      try {
        servers.push(await startRedis(args));
        break;
      } catch (error) {
        if (attempt === 3) throw error;
      }
    }
  }
  const nodes = servers.map(({ port }) => ({ host: HOST, port }));
  const admins = servers.map(({ url }) => new Redis(url));
  const addresses = nodes.map(({ host, port }) => `${host}:${port}`);
  await promisify(execFile)(
    'redis-cli',
    ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes'],
    {
      timeout: 60_000,
    },
  );
  for (const admin of admins) {
    await until(
      async () => /^cluster_state:ok\r?$/m.test(await admin.cluster('INFO')),
      30_000,
      'cluster_state:ok',
      100,
    );
  }
  return {
    nodes,
    admins,
    async stop() {
      for (const admin of admins) admin.disconnect();
      await Promise.all(servers.map((server) => server.stop()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
