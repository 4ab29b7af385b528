import calculateSlot from 'cluster-key-slot';
import { RedissonClient } from '../../lib';
import { valueField } from '../../lib/kinds/faster-multi-lock';
import { namePerPrimary, startCluster, type TestCluster } from '../helpers/cluster';
import { eventually } from '../helpers/redis-server';
import { subscribersOn } from '../helpers/topology';
import { BUILD_TIMEOUT, buildPeer } from '../interop/helpers/build-peer';
import { JavaGroupLock, JavaLock } from '../interop/helpers/java-lock';
import { describeInterop } from '../interop/helpers/java-tools';
import { JavaPeer, READY_TIMEOUT } from '../interop/helpers/peer';

/*
 * Java Redisson and ioredisson on one Redis Cluster (three primaries), both at their default pub/sub
 * settings (sharded on Redis 7): Node listeners hear what a Java lock does on every primary, and the
 * group multi-lock excludes and wakes across the two by the group key's one slot.
 */

/** An explicit lease no waiter may wait out within the tests' bounds: only a message wakes it in time. */
const LEASE = 30_000;
/** A wake-up by message must come well under the lease, even on a loaded machine. */
const WAKE_BOUND = 5_000;

describeInterop('interop on a Redis Cluster: Java Redisson and ioredisson', () => {
  let cluster: TestCluster;
  let peer: JavaPeer | undefined;
  let clients: RedissonClient[] = [];

  beforeAll(async () => {
    const [jar, started] = await Promise.all([buildPeer(), startCluster()]);
    cluster = started;
    await Promise.all(
      cluster.nodes.map((node) => cluster.direct(node.port).config('SET', 'notify-keyspace-events', 'Egx')),
    );
    peer = await JavaPeer.start(
      jar,
      cluster.nodes.map((node) => `redis://${node.host}:${node.port}`),
    );
  }, BUILD_TIMEOUT + READY_TIMEOUT);
  afterEach(async () => {
    await Promise.all(clients.map((c) => c.shutdown()));
    clients = [];
  });
  afterAll(async () => {
    await peer?.stop();
    await cluster?.stop();
  }, 60_000);

  const requirePeer = (): JavaPeer => {
    if (!peer) throw new Error('the Java peer did not start');
    return peer;
  };
  const client = (): RedissonClient => {
    const made = new RedissonClient(cluster.connect());
    clients.push(made);
    return made;
  };

  it('Node listeners hear a Java RLock expire and be deleted by unlock, on every primary', async () => {
    const names = await namePerPrimary(cluster, 'java-listened');
    const redisson = client();
    const heard: string[] = [];
    for (const name of names) {
      await redisson.getLock(name).addListener({
        onExpired: (n) => heard.push(`expired:${n}`),
        onDeleted: (n) => heard.push(`deleted:${n}`),
      });
    }

    const javaLocks = names.map((name) => new JavaLock(requirePeer(), name, requirePeer().newThread()));
    for (const java of javaLocks) await java.lock(150);
    await eventually(() => heard.length === 3, 10_000, 'three expiries');
    expect([...heard].sort()).toEqual(names.map((name) => `expired:${name}`).sort());

    for (const java of javaLocks) {
      await java.lock();
      await java.unlock();
    }
    await eventually(() => heard.length === 6, 10_000, 'three deletions');
    expect(heard.slice(3)).toEqual(names.map((name) => `deleted:${name}`));
  });

  it('Java and Node group multi-locks exclude each other on one value; the Java release wakes the Node waiter by message', async () => {
    const group = 'cluster-group';
    const java = new JavaGroupLock(requirePeer(), group, ['a', 'b'], requirePeer().newThread());
    const redisson = client();
    const node = redisson.getMultiLock(group, ['b', 'c']);

    // Node holds b: Java cannot take {a, b}, nor any part of it.
    await node.lock({ threadId: 1, leaseTime: LEASE });
    expect(await java.tryLock(0, LEASE)).toBe(false);
    expect(await cluster.connect().hexists(group, valueField('a'))).toBe(0);
    await node.unlock({ threadId: 1 });

    // Java holds b: Node waits, parked on the group's channel in its slot, until the Java unlock.
    await java.lock(LEASE);
    expect(await node.tryLock({ threadId: 2 })).toBe(false);
    const acquired = node.tryLock({ threadId: 2, waitTime: 25_000, leaseTime: LEASE });
    const owner = cluster.direct(await cluster.ownerOf(calculateSlot(group)));
    await eventually(
      async () => (await subscribersOn([owner], `redisson_lock__channel:{${group}}`)) === 1,
      10_000,
      'the Node subscription on the group slot',
    );
    const unlockedAt = performance.now();
    await java.unlock();
    expect(await acquired).toBe(true);
    expect(performance.now() - unlockedAt).toBeLessThan(WAKE_BOUND);
    expect(await cluster.connect().hget(group, valueField('c'))).toBe(`${redisson.id}:2`);
    expect(await cluster.connect().hexists(group, valueField('a'))).toBe(0);
    await node.unlock({ threadId: 2 });
    expect(await cluster.connect().exists(group)).toBe(0);
  });
});
