import type { RedissonClient } from '../../lib';
import { delay } from '../helpers/fixture';
import { eventually, subscriberCount } from '../helpers/redis-server';
import type { JavaLock } from './helpers/java-lock';
import { describeInterop } from './helpers/java-tools';
import { useInterop } from './helpers/use-interop';

/** Every holder's lease: a waiter that only re-checked when it ran out would take about this long. */
const LEASE = 30_000;
/** A hand-over by message must come well under the lease, even on a loaded 2-core machine. */
const WAKE_BOUND = 5_000;

// Redisson's names, written out: the test does not borrow ioredisson's key derivation.
const queueOf = (name: string): string => `redisson_lock_queue:{${name}}`;
const timeoutsOf = (name: string): string => `redisson_lock_timeout:{${name}}`;
const sharedChannelOf = (name: string): string => `redisson_lock__channel:{${name}}`;
const waiterChannelOf = (name: string, owner: string): string => `redisson_lock__channel:{${name}}:${owner}`;

/** A queued waiter: who it is, and how to release once it holds. */
interface Waiter {
  label: string;
  owner: string;
  acquired: Promise<boolean>;
  unlock: () => Promise<unknown>;
}

describeInterop('interop: fair lock (RFairLock) across Java and Node', () => {
  const { admin, client, peer, javaLock } = useInterop();

  const queue = (name: string): Promise<string[]> => admin().lrange(queueOf(name), 0, -1);
  const timeouts = async (name: string): Promise<Map<string, number>> => {
    const flat = await admin().zrange(timeoutsOf(name), 0, -1, 'WITHSCORES');
    const scores = new Map<string, number>();
    for (let i = 0; i < flat.length; i += 2) scores.set(flat[i]!, Number(flat[i + 1]));
    return scores;
  };
  const waitForQueueLength = (name: string, length: number): Promise<void> =>
    eventually(async () => (await admin().llen(queueOf(name))) === length, 15_000, `${length} waiter(s) in ${queueOf(name)}`);

  async function javaOwner(lock: JavaLock): Promise<string> {
    return `${peer().clientId}:${await peer().threadId(lock.thread)}`;
  }

  /** A Node waiter in lock() on its own client (threadId 1), queued once its token is in the queue. */
  async function nodeWaiter(name: string, label: string, expectedLength: number): Promise<Waiter> {
    const redisson = client();
    const lock = redisson.getFairLock(name);
    const acquired = lock.lock({ threadId: 1, leaseTime: LEASE }).then(() => true);
    await waitForQueueLength(name, expectedLength);
    return { label, owner: `${redisson.id}:1`, acquired, unlock: () => lock.unlock({ threadId: 1 }) };
  }

  /** A Java waiter in tryLock(60 s, lease) on a thread of its own. */
  async function javaWaiter(name: string, label: string, expectedLength: number): Promise<Waiter> {
    const lock = javaLock(name, 'fairLock');
    const owner = await javaOwner(lock);
    const acquired = lock.tryLock(60_000, LEASE);
    await waitForQueueLength(name, expectedLength);
    return { label, owner, acquired, unlock: () => lock.unlock() };
  }

  /**
   * Lets `first` go and then each waiter as soon as it holds; resolves the order in which they got
   * the lock and how long each took after the previous release.
   */
  async function handOver(release: () => Promise<unknown>, waiters: Waiter[]): Promise<{ order: string[]; latencies: number[] }> {
    const order: string[] = [];
    const latencies: number[] = [];
    const remaining = new Map(waiters.map((waiter) => [waiter.label, waiter.acquired.then((ok) => ({ waiter, ok }))]));
    let releasedAt = performance.now();
    await release();
    while (remaining.size > 0) {
      const { waiter, ok } = await Promise.race(remaining.values());
      expect(ok).toBe(true);
      latencies.push(performance.now() - releasedAt);
      order.push(waiter.label);
      remaining.delete(waiter.label);
      await delay(50);
      releasedAt = performance.now();
      await waiter.unlock();
    }
    return { order, latencies };
  }

  it.each(['java', 'node'] as const)(
    'grants a %s-held lock to Node, Java, Node, Java waiters in arrival order, each by its own message',
    async (holderSide) => {
      const name = `fair:order:${holderSide}`;
      let release: () => Promise<unknown>;
      if (holderSide === 'java') {
        const holder = javaLock(name, 'fairLock');
        await holder.lock(LEASE);
        release = () => holder.unlock();
      } else {
        const holder = client().getFairLock(name);
        await holder.lock({ threadId: 9, leaseTime: LEASE });
        release = () => holder.unlock({ threadId: 9 });
      }
      const waiters = [
        await nodeWaiter(name, 'node-1', 1),
        await javaWaiter(name, 'java-1', 2),
        await nodeWaiter(name, 'node-2', 3),
        await javaWaiter(name, 'java-2', 4),
      ];
      // Both sides queued their own tokens, in arrival order, each with a deadline in the ZSET.
      expect(await queue(name)).toEqual(waiters.map(({ owner }) => owner));
      const deadlines = await timeouts(name);
      expect([...deadlines.keys()].sort()).toEqual(waiters.map(({ owner }) => owner).sort());
      // Deadlines grow along the queue: each waiter's is at least the one before it.
      const scores = waiters.map(({ owner }) => deadlines.get(owner)!);
      for (let i = 1; i < scores.length; i++) expect(scores[i]!).toBeGreaterThan(scores[i - 1]!);
      // Nobody waits on the shared channel: each waiter has its own.
      expect(await subscriberCount(admin(), sharedChannelOf(name))).toBe(0);
      for (const { owner } of waiters) {
        await eventually(async () => (await subscriberCount(admin(), waiterChannelOf(name, owner))) === 1, 10_000, `a subscription on ${owner}'s channel`);
      }
      await delay(100);
      expect(await admin().pttl(name)).toBeGreaterThan(LEASE - 10_000);

      const { order, latencies } = await handOver(release, waiters);

      expect(order).toEqual(['node-1', 'java-1', 'node-2', 'java-2']);
      for (const latency of latencies) expect(latency).toBeLessThan(WAKE_BOUND);
      await eventually(async () => (await admin().exists(name, queueOf(name), timeoutsOf(name))) === 0, 5_000, 'the fair lock keys to go');
    },
  );

  it.each([
    ['Java unlock', 'a Node waiter', 'java'],
    ['Node unlock', 'a Java waiter', 'node'],
  ] as const)('%s wakes %s on that waiter\'s own channel with 0', async (_unlock, _waiter, holderSide) => {
    const name = `fair:channel:${holderSide}`;
    const listener = admin().duplicate();
    const messages: string[] = [];
    try {
      await listener.psubscribe(`${sharedChannelOf(name)}*`);
      listener.on('pmessage', (_pattern: string, channel: string, message: string) => messages.push(`${channel} ${message}`));
      let redisson: RedissonClient | undefined;
      let release: () => Promise<unknown>;
      let waiter: Waiter;
      if (holderSide === 'java') {
        const holder = javaLock(name, 'fairLock');
        await holder.lock(LEASE);
        release = () => holder.unlock();
        waiter = await nodeWaiter(name, 'node', 1);
      } else {
        redisson = client();
        const holder = redisson.getFairLock(name);
        await holder.lock({ threadId: 9, leaseTime: LEASE });
        release = () => holder.unlock({ threadId: 9 });
        waiter = await javaWaiter(name, 'java', 1);
      }
      await eventually(async () => (await subscriberCount(admin(), waiterChannelOf(name, waiter.owner))) === 1, 10_000, 'the waiter subscription');
      await delay(100);

      const releasedAt = performance.now();
      await release();
      expect(await waiter.acquired).toBe(true);
      expect(performance.now() - releasedAt).toBeLessThan(WAKE_BOUND);
      await eventually(() => messages.length >= 1, 5_000, 'the unlock message');
      // One message, to the head's channel only.
      expect(messages).toEqual([`${waiterChannelOf(name, waiter.owner)} 0`]);
      expect(await admin().hgetall(name)).toEqual({ [waiter.owner]: '1' });
      await waiter.unlock();
    } finally {
      listener.disconnect();
    }
  });

  it.each([
    ['Node', 'Java'],
    ['Java', 'Node'],
  ] as const)('a %s waiter giving up leaves queue and deadlines right for the %s waiter behind it', async (giverSide, followerSide) => {
    const name = `fair:give-up:${giverSide}`;
    const GIVE_UP_MS = 1_500;
    // The holder is on the giver's side, so the follower is woken across languages.
    let release: () => Promise<unknown>;
    if (giverSide === 'Java') {
      const holder = javaLock(name, 'fairLock');
      await holder.lock(LEASE);
      release = () => holder.unlock();
    } else {
      const holder = client().getFairLock(name);
      await holder.lock({ threadId: 9, leaseTime: LEASE });
      release = () => holder.unlock({ threadId: 9 });
    }
    let giverOwner: string;
    let gaveUp: Promise<boolean>;
    if (giverSide === 'Java') {
      const giver = javaLock(name, 'fairLock');
      giverOwner = await javaOwner(giver);
      gaveUp = giver.tryLock(GIVE_UP_MS, LEASE);
    } else {
      const redisson = client();
      giverOwner = `${redisson.id}:1`;
      gaveUp = redisson.getFairLock(name).tryLock({ threadId: 1, waitTime: GIVE_UP_MS, leaseTime: LEASE });
    }
    await waitForQueueLength(name, 1);
    const follower = followerSide === 'Java' ? await javaWaiter(name, 'java', 2) : await nodeWaiter(name, 'node', 2);
    expect(await queue(name)).toEqual([giverOwner, follower.owner]);
    const before = (await timeouts(name)).get(follower.owner)!;

    expect(await gaveUp).toBe(false);

    // The giver is gone from both keys; the follower heads the queue with its deadline moved up by
    // the giver's slack (its wait time), as Redisson's acquireFailed does.
    expect(await queue(name)).toEqual([follower.owner]);
    const after = await timeouts(name);
    expect([...after.keys()]).toEqual([follower.owner]);
    expect(before - after.get(follower.owner)!).toBe(GIVE_UP_MS);
    expect(after.get(follower.owner)!).toBeGreaterThan(Date.now() + LEASE - 10_000);

    const releasedAt = performance.now();
    await release();
    expect(await follower.acquired).toBe(true);
    expect(performance.now() - releasedAt).toBeLessThan(WAKE_BOUND);
    await follower.unlock();
    await eventually(async () => (await admin().exists(name, queueOf(name), timeoutsOf(name))) === 0, 5_000, 'the fair lock keys to go');
  });
});
