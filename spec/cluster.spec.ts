import calculateSlot from 'cluster-key-slot';
import Redis, { type ClusterOptions } from 'ioredis';
import { RedissonClient, type RedissonEvents, type RedissonOptions } from '../lib';
import { startCluster, type TestCluster } from './helpers/cluster';
import { delay } from './helpers/fixture';
import { hasRedis7Options } from './helpers/server-source';
import { eventually } from './helpers/redis-server';

/*
 * Redis Cluster (three masters, no replicas). Sharded wake-ups run on a default Cluster connection
 * and on one made with `shardedSubscribers: true`: with ioredis' default subscriber (one connection
 * to a random node), SSUBSCRIBE of a channel another node owns never completes, so the client's
 * subscriber connection must route SSUBSCRIBE by slot whatever the caller's options.
 */

let cluster: TestCluster;
/** One direct connection per master, keyed by port. */
const direct = new Map<number, Redis>();
/** Port of the master serving each slot. */
const slotOwner = new Map<number, number>();
const clients: RedissonClient[] = [];

beforeAll(async () => {
  cluster = await startCluster();
  for (const node of cluster.nodes) {
    const redis = new Redis({ host: node.host, port: node.port, maxRetriesPerRequest: null });
    redis.on('error', () => undefined);
    direct.set(node.port, redis);
  }
  for (const [from, to, master] of await direct.get(cluster.nodes[0]!.port)!.cluster('SLOTS')) {
    for (let slot = from; slot <= to; slot++) slotOwner.set(slot, master![1]);
  }
  expect(slotOwner.size).toBe(16_384);
}, 120_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.shutdown().catch(() => undefined)));
  for (const redis of direct.values()) redis.disconnect();
  await cluster?.stop();
}, 60_000);

/** A client on its own Cluster connection; kept until the last test checks and shuts it down. */
function client(options?: RedissonOptions, connection?: ClusterOptions): RedissonClient {
  const redisson = new RedissonClient(cluster.connect(connection), options);
  clients.push(redisson);
  return redisson;
}

/** Whether the servers have sharded pub/sub (Redis 7.0+, Valkey); Redis 6.2 has not. */
const SHARDED_SERVER = hasRedis7Options();

/** A Cluster connection whose SSUBSCRIBE goes to the node owning the channel's slot. */
const SHARDED: ClusterOptions = { shardedSubscribers: true };

function portOf(key: string): number {
  return slotOwner.get(calculateSlot(key))!;
}

/** Direct connection to the master owning `key`. */
function ownerOf(key: string): Redis {
  return direct.get(portOf(key))!;
}

/** `count` names `prefix-<i>` in distinct slots, spread over every master. */
function spreadNames(prefix: string, count: number): string[] {
  const names: string[] = [];
  const slots = new Set<number>();
  const ports = new Set<number>();
  for (let i = 0; names.length < count; i++) {
    const name = `${prefix}-${i}`;
    const slot = calculateSlot(name);
    // Take a name on a master not yet covered first, then any name in a new slot.
    const needsPort = ports.size < cluster.nodes.length && ports.has(portOf(name));
    if (slots.has(slot) || needsPort) continue;
    slots.add(slot);
    ports.add(portOf(name));
    names.push(name);
  }
  expect(ports.size).toBe(Math.min(count, cluster.nodes.length));
  return names;
}

/** Sharded subscribers of `channel` on `redis`; none on a server without sharded pub/sub. */
async function shardSubscribers(redis: Redis, channel: string): Promise<number> {
  if (!SHARDED_SERVER) return 0;
  const [, count] = (await redis.call('PUBSUB', 'SHARDNUMSUB', channel)) as [string, number];
  return Number(count);
}

async function classicSubscribers(redis: Redis, channel: string): Promise<number> {
  const [, count] = (await redis.pubsub('NUMSUB', channel)) as [string, number];
  return Number(count);
}

/** Classic subscribers of `channel` across every master (SUBSCRIBE lands on any node). */
async function classicSubscribersEverywhere(channel: string): Promise<number> {
  let total = 0;
  for (const redis of direct.values()) total += await classicSubscribers(redis, channel);
  return total;
}

describe('Redis Cluster', () => {
  it('locks, re-enters and unlocks names in different slots and a {tag}ged name; each hash lives on its slot\'s master', async () => {
    const redisson = client();
    const names = [...spreadNames('slot', 3), '{user:7}:profile'];
    expect(calculateSlot('{user:7}:profile')).toBe(calculateSlot('user:7'));
    await redisson.run(async () => {
      for (const name of names) {
        const lock = redisson.getLock(name);
        await lock.lock();
        await lock.lock();
        expect(await lock.getHoldCount()).toBe(2);
      }
      for (const name of names) {
        const owner = ownerOf(name);
        const fields = await owner.hgetall(name);
        expect(Object.keys(fields)).toHaveLength(1);
        const [field] = Object.keys(fields);
        expect(field).toMatch(new RegExp(`^${redisson.id}:[1-9][0-9]*$`));
        expect(fields[field!]).toBe('2');
        const slot = calculateSlot(name);
        for (const [port, redis] of direct) {
          expect(await redis.cluster('COUNTKEYSINSLOT', slot)).toBe(port === portOf(name) ? 1 : 0);
        }
        expect(await redisson.getLock(name).isHeldByCurrentThread()).toBe(true);
      }
      for (const name of names) {
        const lock = redisson.getLock(name);
        await lock.unlock();
        expect(await lock.getHoldCount()).toBe(1);
        await lock.unlock();
        expect(await lock.getHoldCount()).toBe(0);
      }
    });
    for (const name of names) expect(await ownerOf(name).exists(name)).toBe(0);
    expect(redisson.diagnostics()).toEqual({ channels: 0, waiters: 0, leases: 0 });
  });

  it('keeps ten watchdog leases in ten slots renewed for 2 s without losing any', async () => {
    const redisson = client({ lockWatchdogTimeout: 600, lockWatchdogBatchSize: 100 });
    const lost: RedissonEvents['lockLost'][] = [];
    redisson.on('lockLost', (event) => lost.push(event));
    const names = spreadNames('watchdog', 10);
    const handles = await Promise.all(names.map((name) => redisson.getLock(name).acquire()));
    await delay(2_000); // ten renewal rounds; one CROSSSLOT failure lets the 600 ms leases expire
    for (const name of names) {
      const ttl = await ownerOf(name).pttl(name);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(600);
    }
    expect(handles.every((h) => !h.signal.aborted)).toBe(true);
    expect(lost).toEqual([]);
    expect(redisson.diagnostics().leases).toBe(10);
    await Promise.all(handles.map((h) => h.release()));
    for (const name of names) expect(await ownerOf(name).exists(name)).toBe(0);
    expect(lost).toEqual([]);
    expect(redisson.diagnostics().leases).toBe(0);
  });

  it('resolves shardedPubSub auto by the server: sharded where it has it, else classic and one logger line saying so', async () => {
    const name = spreadNames('auto-probe', 1)[0]!;
    const channel = `redisson_lock__channel:{${name}}`;
    const owner = ownerOf(name);
    const said: string[] = [];
    const holder = client();
    const waiter = client({ logger: { debug: (message) => said.push(message) } });
    const held = await holder.getLock(name).acquire({ leaseTime: 30_000 });
    const waiting = waiter.getLock(name).acquire();
    const subscribed = async (): Promise<[number, number]> => [await shardSubscribers(owner, channel), await classicSubscribersEverywhere(channel)];
    await eventually(async () => (await subscribed()).includes(1), 15_000, `a subscriber of ${channel}`);
    expect(await subscribed()).toEqual(SHARDED_SERVER ? [1, 0] : [0, 1]);
    await held.release();
    await (await waiting).release(); // woken by whichever publish matches the subscription
    expect(waiter.options.shardedPubSub).toBe('auto');
    const fallback = said.filter((message) => message.includes("shardedPubSub 'auto'"));
    expect(fallback).toEqual(SHARDED_SERVER ? [] : [expect.stringContaining('no sharded pub/sub (Redis before 7.0); this client uses PUBLISH/SUBSCRIBE')]);
  });

  // Redis 6.2 has no sharded pub/sub: there only the test above and the classic ones apply.
  const shardedModes = [
    ['auto', 'a default Cluster', {}],
    ['on', 'a default Cluster', {}],
    ['auto', 'a shardedSubscribers Cluster', SHARDED],
    ['on', 'a shardedSubscribers Cluster', SHARDED],
  ] as const;
  if (SHARDED_SERVER) describe.each(shardedModes)('sharded pub/sub (shardedPubSub: %s, on %s)', (mode, _connection, options) => {
    // The slot map is only known once the cluster runs: pick the name (one per master) in the test.
    it.each([0, 1, 2])('wakes a waiter on another client by SPUBLISH (lock on master #%i)', async (index) => {
      const name = spreadNames(`wake-${mode}`, 3)[index]!;
      const channel = `redisson_lock__channel:{${name}}`;
      const owner = ownerOf(name);
      const holder = client({ shardedPubSub: mode }, options);
      const waiter = client({ shardedPubSub: mode }, options);
      const held = await holder.getLock(name).acquire({ leaseTime: 30_000 });
      const waiting = waiter.getLock(name).acquire();
      await eventually(async () => (await shardSubscribers(owner, channel)) === 1, 15_000, `SSUBSCRIBE ${channel}`);
      expect(await classicSubscribersEverywhere(channel)).toBe(0);
      expect(waiter.diagnostics()).toMatchObject({ channels: 1, waiters: 1 });
      const releasedAt = Date.now();
      await held.release();
      const handle = await waiting;
      expect(Date.now() - releasedAt).toBeLessThan(5_000); // the lease had 30 s left
      expect(await owner.hget(name, `${waiter.id}:${handle.threadId}`)).toBe('1');
      await eventually(async () => (await shardSubscribers(owner, channel)) === 0, 5_000, `SUNSUBSCRIBE ${channel}`);
      await handle.release();
      expect(await owner.exists(name)).toBe(0);
    });
  });

  it.each([0, 1, 2])('wakes a waiter by classic PUBLISH/SUBSCRIBE with shardedPubSub: off (lock on master #%i)', async (index) => {
    const name = spreadNames('classic', 3)[index]!;
    const channel = `redisson_lock__channel:{${name}}`;
    const holder = client({ shardedPubSub: 'off' });
    const waiter = client({ shardedPubSub: 'off' });
    const held = await holder.getLock(name).acquire({ leaseTime: 30_000 });
    const waiting = waiter.getLock(name).acquire();
    await eventually(async () => (await classicSubscribersEverywhere(channel)) === 1, 15_000, `SUBSCRIBE ${channel}`);
    for (const redis of direct.values()) expect(await shardSubscribers(redis, channel)).toBe(0);
    const releasedAt = Date.now();
    await held.release();
    const handle = await waiting;
    expect(Date.now() - releasedAt).toBeLessThan(5_000);
    await eventually(async () => (await classicSubscribersEverywhere(channel)) === 0, 5_000, `UNSUBSCRIBE ${channel}`);
    await handle.release();
    expect(await ownerOf(name).exists(name)).toBe(0);
  });

  it.each(
    ([
      ['sharded', 'on', SHARDED],
      ['classic', 'off', {}],
    ] as const).filter(([kind]) => SHARDED_SERVER || kind === 'classic'),
  )('keeps %s subscriptions made while the subscriber connections are still connecting', async (_kind, mode, options) => {
    const names = spreadNames(`early-${mode}`, 12);
    const holder = client({ shardedPubSub: mode }, options);
    const held = await Promise.all(names.map((name) => holder.getLock(name).acquire({ leaseTime: 30_000 })));
    const waiter = client({ shardedPubSub: mode }, options);
    const waits: Promise<void>[] = [];
    for (const name of names) {
      waits.push(waiter.getLock(name).using(() => undefined));
      await new Promise((resolve) => setImmediate(resolve));
    }
    await eventually(() => waiter.diagnostics().waiters === names.length, 15_000, 'every waiter parked');
    const releasedAt = Date.now();
    await Promise.all(held.map((handle) => handle.release()));
    await Promise.all(waits);
    expect(Date.now() - releasedAt).toBeLessThan(10_000); // the leases had 30 s left
    for (const name of names) expect(await ownerOf(name).exists(name)).toBe(0);
    await eventually(() => waiter.diagnostics().channels === 0 && waiter.diagnostics().waiters === 0, 5_000, 'waiter idle');
  }, 60_000);

  it('keeps a counter exact under 2 clients x 2 tasks x 20 using() sections on one lock', async () => {
    const name = '{counter}:lock';
    const counter = '{counter}:value';
    const redissons = [client(), client()];
    const redis = ownerOf(counter);
    const task = async (redisson: RedissonClient): Promise<void> => {
      const lock = redisson.getLock(name);
      for (let i = 0; i < 20; i++) {
        await lock.using(async () => {
          // Read-modify-write with a pause: loses updates unless the lock excludes.
          const value = Number((await redis.get(counter)) ?? 0);
          await delay(1);
          await redis.set(counter, value + 1);
        });
      }
    };
    await Promise.all(redissons.flatMap((r) => [task(r), task(r)]));
    expect(await redis.get(counter)).toBe('80');
    expect(await redis.exists(name)).toBe(0);
  }, 120_000);

  it('leaves every client idle, and shuts every one down', async () => {
    expect(clients.length).toBeGreaterThan(0);
    for (const redisson of clients) {
      await eventually(() => redisson.diagnostics().channels === 0, 5_000, 'the last channel to be released');
      expect(redisson.diagnostics()).toEqual({ channels: 0, waiters: 0, leases: 0 });
    }
    await Promise.all(clients.map((c) => c.shutdown()));
  });
});
