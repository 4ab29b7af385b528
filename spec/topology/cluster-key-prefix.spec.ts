import { RedissonClient } from '../../lib';
import { startCluster, type TestCluster } from '../helpers/cluster';
import { delay } from '../helpers/fixture';

/*
 * A Cluster connection's own `keyPrefix` (the top-level option, not `redisOptions.keyPrefix`) is the
 * prefix ioredis puts on keys, so it must be the one the client puts on the channels it subscribes
 * to: otherwise a waiter listens on a channel no release publishes on and wakes only when the
 * holder's lease ends. The prefix carries a hash tag, so that a lock and its channel share a slot.
 * With sharded pub/sub, ioredis prefixes SSUBSCRIBE's channels itself, so the client must not.
 */

let cluster: TestCluster;
const clients: RedissonClient[] = [];

beforeAll(async () => {
  cluster = await startCluster({ masters: 3 });
}, 180_000);
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.shutdown()));
});
afterAll(async () => {
  await cluster?.stop();
}, 60_000);

describe.each(['off', 'on'] as const)('shardedPubSub %s', (shardedPubSub) => {
  function client(): RedissonClient {
    const made = new RedissonClient(cluster.connect({ keyPrefix: '{app}:' }), { shardedPubSub });
    clients.push(made);
    return made;
  }

  it('wakes a waiter by message under a Cluster-wide keyPrefix, long before the holder lease ends', async () => {
    const holder = client();
    const waiter = client();
    const held = await holder.getLock('prefixed').acquire({ leaseTime: 60_000 });
    expect(await cluster.connect().exists('{app}:prefixed')).toBe(1);
    const waiting = waiter.getLock('prefixed').tryLock({ waitTime: 20_000, leaseTime: 60_000, threadId: 1 });
    await delay(300);
    const releasedAt = performance.now();
    await held.release();
    expect(await waiting).toBe(true);
    // A message wakes it at once; without it the waiter re-checks only when its 20 s wait runs out.
    expect(performance.now() - releasedAt).toBeLessThan(10_000);
    await waiter.getLock('prefixed').unlock({ threadId: 1 });
  }, 60_000);
});
