import type { Cluster } from 'ioredis';
import { lockChannel } from '../../lib/keys';
import { CLUSTER_LOCK_USER_RULES, LOCK_USER, lockContractAsUser } from '../helpers/acl';
import { eventually } from '../helpers/redis-server';
import { TLS_CLUSTER } from '../helpers/tls';
import { useTopology } from '../helpers/topology';

/*
 * A Cluster reached as most managed Redis is: over TLS only (clients, cluster bus and replication),
 * as an ACL user with only the rights docs/security.md lists for a Cluster with sharded pub/sub.
 * The user is set on every node; the library's own sharded subscribers must carry TLS and the user.
 */

const fixture = useTopology(TLS_CLUSTER);
const prepare = async () => {
  const admin = fixture.deployment().admin() as Cluster;
  await admin.ping(); // connected: its node list is the cluster's
  for (const node of admin.nodes('all')) {
    await node.call('ACL', 'SETUSER', LOCK_USER.username, 'reset', ...CLUSTER_LOCK_USER_RULES);
  }
};

lockContractAsUser('RLock over TLS as a least-privilege ACL user', prepare, fixture);

describe('a Cluster over TLS as a least-privilege ACL user', () => {
  const { client, deployment } = fixture;
  beforeAll(prepare);

  it('wakes a waiter by a sharded message through subscribers that log in as the same user', async () => {
    const holder = client({}, LOCK_USER);
    const waiter = client({}, LOCK_USER);
    const name = 'contract:tls-cluster';
    await holder.getLock(name).lock({ leaseTime: 30_000 });
    const waiting = waiter.getLock(name).acquire({ waitTime: 25_000 });
    await eventually(() => waiter.diagnostics().waiters === 1, 10_000, 'the waiter parked');
    await eventually(
      async () => (await deployment().subscribers(lockChannel(name))) >= 1,
      10_000,
      'a shard subscription',
    );
    const releasedAt = performance.now();
    await holder.getLock(name).unlock();
    const handle = await waiting;
    // Well under the 30 s lease: the unlock message woke it.
    expect(performance.now() - releasedAt).toBeLessThan(5_000);
    await handle.release();
  });
});
