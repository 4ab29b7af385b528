import calculateSlot from 'cluster-key-slot';
import type Redis from 'ioredis';
import { RedissonClient, type RedissonOptions } from '../lib';
import { namePerPrimary, startCluster, type TestCluster } from './helpers/cluster';
import { delay } from './helpers/fixture';
import { eventually, subscriberCount } from './helpers/redis-server';

/*
 * Lock listeners on a Redis Cluster (three primaries): each primary publishes the keyspace
 * notifications of its own keys, so the client subscribes the keyevent channels on every primary.
 */

const EXPIRED = '__keyevent@0__:expired';
const DELETED = '__keyevent@0__:del';

let cluster: TestCluster;
let clients: RedissonClient[] = [];

beforeAll(async () => {
  cluster = await startCluster();
  await Promise.all(
    cluster.nodes.map((node) => cluster.direct(node.port).config('SET', 'notify-keyspace-events', 'Egx')),
  );
}, 120_000);

afterEach(async () => {
  await Promise.all(clients.map((c) => c.shutdown()));
  clients = [];
});

afterAll(async () => {
  await cluster?.stop();
}, 60_000);

function client(options?: RedissonOptions): RedissonClient {
  const redisson = new RedissonClient(cluster.connect(), options);
  clients.push(redisson);
  return redisson;
}

/** Subscribers of `channel` on every primary, by port. */
async function subscribersPerNode(channel: string): Promise<number[]> {
  return Promise.all((await cluster.primaries()).sort().map((port) => subscriberCount(cluster.direct(port), channel)));
}

describe.each(['auto', 'off'] as const)('lock listeners on a Cluster, shardedPubSub %s', (shardedPubSub) => {
  it('hear expiry and deletion on every primary, with one subscription per primary and event', async () => {
    const redisson = client({ shardedPubSub });
    const names = await namePerPrimary(cluster, `listened-${shardedPubSub}`);
    const heard: string[] = [];
    const ids = await Promise.all(
      names.map((name) =>
        redisson
          .getLock(name)
          .addListener({ onExpired: (n) => heard.push(`expired:${n}`), onDeleted: (n) => heard.push(`deleted:${n}`) }),
      ),
    );
    expect(await subscribersPerNode(EXPIRED)).toEqual([1, 1, 1]);
    expect(await subscribersPerNode(DELETED)).toEqual([1, 1, 1]);

    await Promise.all(names.map((name) => redisson.getLock(name).lock({ leaseTime: 150, threadId: 1 })));
    await eventually(() => heard.length === 3, 10_000, 'three expiries');
    await redisson.run(async () => {
      for (const name of names) {
        await redisson.getLock(name).lock();
        await redisson.getLock(name).unlock();
      }
    });
    await eventually(() => heard.length === 6, 10_000, 'three deletions');
    expect(heard.slice(0, 3).sort()).toEqual(names.map((name) => `expired:${name}`).sort());
    expect(heard.slice(3)).toEqual(names.map((name) => `deleted:${name}`));

    await Promise.all(ids.map((id) => redisson.getLock(names[0]!).removeListener(id)));
    expect(await subscribersPerNode(EXPIRED)).toEqual([0, 0, 0]);
    expect(await subscribersPerNode(DELETED)).toEqual([0, 0, 0]);
  });

  it('leave no subscription on any primary after shutdown', async () => {
    const redisson = client({ shardedPubSub });
    await redisson.getLock('closing').addListener({ onDeleted: () => undefined });
    expect(await subscribersPerNode(DELETED)).toEqual([1, 1, 1]);
    await redisson.shutdown();
    await eventually(
      async () => (await subscribersPerNode(DELETED)).every((count) => count === 0),
      5_000,
      'no subscriber',
    );
  });
});

it('a listener still hears its lock after the slot moved to another primary', async () => {
  const redisson = client();
  const name = 'moving';
  const slot = calculateSlot(name);
  const heard: string[] = [];
  await redisson.getLock(name).addListener({ onDeleted: (n) => heard.push(n) });
  const from = await cluster.ownerOf(slot);
  const to = (await cluster.primaries()).find((port) => port !== from)!;
  await cluster.moveSlot(slot, to);
  const direct: Redis = cluster.direct(to);
  await direct.set(name, '1');
  await direct.del(name);
  await eventually(() => heard.length === 1, 10_000, 'the deletion on the new primary');
  await delay(100);
  expect(heard).toEqual([name]);
});
