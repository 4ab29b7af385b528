import calculateSlot from 'cluster-key-slot';
import { RedissonClient, type Handle, type RedissonOptions } from '../../lib';
import { lockChannel } from '../../lib/keys';
import { startCluster, type TestCluster } from '../helpers/cluster';
import { eventually } from '../helpers/redis-server';
import { subscribersOn } from '../helpers/topology';

/*
 * Redis Cluster with three primaries and one replica each: names of every shape stay in one slot,
 * replica sync runs, and waiters keep being woken by message (sharded and classic pub/sub) after the
 * slot of their lock moves to another primary, after a CLUSTER FAILOVER, and after a primary dies.
 * The tests run in order on one cluster; the last one kills a primary.
 */

/**
 * Watchdog lease of the renewal tests. Well above the replica-sync bound (1 s): a write's WAIT holds
 * its connection, renewals queue behind it, and on a loaded machine a shorter lease (0.6 s) expired
 * before `lock()` even returned.
 */
const LEASE = 3_000;

let cluster: TestCluster;
let clients: RedissonClient[] = [];
const debug: { message: string; error: unknown }[] = [];

beforeAll(async () => {
  cluster = await startCluster({ masters: 3, replicas: 1, nodeTimeout: 2_000 });
}, 180_000);

afterEach(async () => {
  await Promise.all(clients.map((c) => c.shutdown().catch(() => undefined)));
  clients = [];
});

afterAll(async () => {
  await cluster?.stop();
}, 60_000);

function client(options: RedissonOptions = {}): RedissonClient {
  const logger = { debug: (message: string, details?: Record<string, unknown>) => debug.push({ message, error: details?.error }) };
  const redisson = new RedissonClient(cluster.connect(), { logger, ...options });
  clients.push(redisson);
  return redisson;
}

/** Every error the clients recovered from that mentions CROSSSLOT. */
const crossSlotErrors = () => debug.filter(({ error }) => String(error).includes('CROSSSLOT'));

async function waitCalls(): Promise<number> {
  let total = 0;
  for (const port of await cluster.primaries()) {
    const stats = await cluster.direct(port).info('commandstats');
    total += Number(/^cmdstat_wait:calls=(\d+)/m.exec(stats)?.[1] ?? 0);
  }
  return total;
}

/** The acquisition's handle and when (performance.now()) it resolved. */
function timed(acquiring: Promise<Handle>): Promise<{ handle: Handle; at: number }> {
  return acquiring.then((handle) => ({ handle, at: performance.now() }));
}

/**
 * Holds `name` in one client, parks a waiter in another, runs `disturb` (the waiter's subscription
 * must survive it), then releases and expects the waiter woken by the message, far sooner than the
 * holder's 30 s lease.
 */
async function wakeAfter(name: string, mode: 'on' | 'off', disturb: () => Promise<void>): Promise<void> {
  const holder = client({ shardedPubSub: mode });
  const waiter = client({ shardedPubSub: mode });
  const reconnects: number[] = [];
  waiter.on('subscriberReconnected', () => reconnects.push(performance.now()));
  const held = await holder.getLock(name).acquire({ leaseTime: 30_000 });
  const waiting = timed(waiter.getLock(name).acquire());
  await eventually(() => waiter.diagnostics().waiters === 1, 15_000, 'a parked waiter');
  await disturb();
  // Sharded, the primary that gave the slot up dropped the channel: the waiter's client subscribes
  // it again and wakes the waiter to re-check. It must be parked (and subscribed) again.
  if (mode === 'on') await eventually(() => reconnects.length > 0, 15_000, 'the channel subscribed again');
  await eventually(() => waiter.diagnostics().waiters === 1, 15_000, 'the waiter parked again');
  await eventually(async () => (await listenersOf(name, mode)) >= 1, 15_000, 'a subscription that hears the release');
  const releasedAt = performance.now();
  await held.release();
  const { handle, at } = await waiting;
  // Woken by the message: not by a re-check after a re-subscription, nor by the lease's end.
  expect(reconnects.filter((when) => when > releasedAt)).toEqual([]);
  expect(at - releasedAt).toBeLessThan(10_000);
  await handle.release();
}

/** Subscribers of `channel` on every node. */
const subscribersOf = (channel: string): Promise<number> => subscribersOn(cluster.all.map(({ port }) => cluster.direct(port)), channel);

/**
 * Subscribers of `name`'s lock channel that hear a message published on it now. Classic, a PUBLISH
 * reaches every node. Sharded, those on the slot's primary: a replica's hear its primary's messages
 * only once the primary lists it, and a primary demoted by CLUSTER FAILOVER, keeping or taking
 * shard subscriptions, is listed by the new one only a gossip round later (Redis 7.0).
 */
async function listenersOf(name: string, mode: 'on' | 'off'): Promise<number> {
  if (mode === 'off') return subscribersOf(lockChannel(name));
  return subscribersOn([cluster.direct(await cluster.ownerOf(calculateSlot(name)))], lockChannel(name));
}

describe('Redis Cluster with replicas', () => {
  const shapes = ['plain', '{tag}', '{tag}:suffix', 'prefix:{tag}', 'pre{mid}post', '{a}{b}', 'x{y}z}', 'ünïcode ✓', 'with space', 'a:b:c'];

  it.each(shapes)('runs every RLock operation on %p without CROSSSLOT, replica sync included', async (name) => {
    const redisson = client({ lockWatchdogTimeout: LEASE });
    const other = client();
    const waitsBefore = await waitCalls();
    const lock = redisson.getLock(name);
    await redisson.run(async () => {
      await lock.lock();
      expect(await lock.tryLock()).toBe(true);
      expect(await lock.getHoldCount()).toBe(2);
      expect(await other.getLock(name).tryLock({ waitTime: 700 })).toBe(false); // subscribes, waits, gives up
      await new Promise((resolve) => setTimeout(resolve, LEASE / 3 + 500)); // a renewal at least
      expect(await lock.isLocked()).toBe(true);
      await lock.unlock();
      await lock.unlock();
    });
    const waiting = other.getLock(name).tryLock({ waitTime: 10_000 });
    expect(await waiting).toBe(true);
    expect(await other.getLock(name).forceUnlock()).toBe(true);
    expect(await lock.isLocked()).toBe(false);
    expect(crossSlotErrors()).toEqual([]);
    expect(await waitCalls()).toBeGreaterThan(waitsBefore);
  });

  it('groups a watchdog batch over many slots and names by slot: no renewal fails', async () => {
    const redisson = client({ lockWatchdogTimeout: LEASE });
    const names = [...shapes, ...Array.from({ length: 30 }, (_, i) => `many-${i}`)];
    const handles = await Promise.all(names.map((name) => redisson.getLock(name).acquire()));
    await new Promise((resolve) => setTimeout(resolve, LEASE / 3 + 500)); // a renewal batch at least
    expect(handles.filter((h) => h.signal.aborted)).toEqual([]);
    expect(debug.filter(({ message }) => message.includes('renewal'))).toEqual([]);
    await Promise.all(handles.map((h) => h.release()));
  });

  describe.each(['on', 'off'] as const)('with shardedPubSub: %s', (mode) => {
    it('wakes a waiter by message after the slot of its lock moved to another primary', async () => {
      const name = `moving-${mode}`;
      await wakeAfter(name, mode, async () => {
        const slot = calculateSlot(name);
        const from = await cluster.ownerOf(slot);
        const to = (await cluster.primaries()).find((port) => port !== from)!;
        await cluster.moveSlot(slot, to);
        expect(await cluster.ownerOf(slot)).toBe(to);
      });
    });

    it('wakes a waiter by message after a CLUSTER FAILOVER of its primary', async () => {
      const name = `failover-${mode}`;
      await wakeAfter(name, mode, async () => {
        const primary = await cluster.ownerOf(calculateSlot(name));
        await cluster.failover(await cluster.replicaOf(primary));
        expect(await cluster.ownerOf(calculateSlot(name))).not.toBe(primary);
      });
    });
  });

  it('after a primary is killed: the replicated lock survives on the promoted replica and the waiter is woken', async () => {
    const name = 'killed';
    const holder = client();
    const waiter = client();
    const held = await holder.getLock(name).acquire(); // watchdog lease, renewed
    const waiting = timed(waiter.getLock(name).acquire());
    await eventually(() => waiter.diagnostics().waiters === 1, 15_000, 'a parked waiter');
    const primary = await cluster.ownerOf(calculateSlot(name));
    await cluster.kill(primary);
    const promoted = await cluster.promotedAfter(primary);
    // Replica sync made the replica have the lock before the acquire returned.
    expect(await cluster.direct(promoted).hlen(name)).toBe(1);
    await eventually(() => waiter.diagnostics().waiters === 1, 30_000, 'the waiter parked again');
    await eventually(async () => (await subscribersOf(lockChannel(name))) >= 1, 30_000, 'a subscription on the new primary');
    expect(held.signal.aborted).toBe(false);
    const releasedAt = performance.now();
    await held.release();
    const { handle, at } = await waiting;
    expect(at - releasedAt).toBeLessThan(10_000);
    await handle.release();
    expect(await cluster.direct(promoted).exists(name)).toBe(0);
  }, 180_000);
});
