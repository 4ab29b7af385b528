import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import {
  LockNotHeldError,
  LockReentryError,
  type RFairLock,
  type Handle,
  type RedissonClient,
} from '../lib';
import { fairLockQueue, fairLockTimeouts, fairWaiterChannel, lockChannel } from '../lib/keys';
import { delay, useRedis } from './helpers/fixture';
import { commandCounts, commandsBetween, eventually, subscriberCount } from './helpers/redis-server';

const { admin, client, server } = useRedis();
const FAIR_WAITER = join(__dirname, 'fixtures', 'fair-waiter.mjs');

/** The queue as Redis has it, head first. */
const queueOf = (name: string) => admin().lrange(fairLockQueue(name), 0, -1);

/** The deadline set as Redis has it: owner token -> epoch ms. */
async function deadlinesOf(name: string): Promise<Map<string, number>> {
  const flat = await admin().zrange(fairLockTimeouts(name), 0, -1, 'WITHSCORES');
  const scores = new Map<string, number>();
  for (let i = 0; i < flat.length; i += 2) scores.set(flat[i]!, Number(flat[i + 1]));
  return scores;
}

/** Waits until `count` waiters are queued on `name`. */
const queued = (name: string, count: number) =>
  eventually(async () => (await admin().llen(fairLockQueue(name))) === count, 10_000, `${count} queued on ${name}`);

/** Waits until neither the queue nor the deadline set of `name` is left in Redis. */
const noQueueLeft = (name: string) =>
  eventually(
    async () => (await admin().exists(fairLockQueue(name), fairLockTimeouts(name))) === 0,
    5_000,
    `no queue or deadline set of ${name}`,
  );

function expectIdle(redisson: RedissonClient): void {
  expect(redisson.diagnostics()).toEqual({ channels: 0, waiters: 0, leases: 0 });
}

describe('FairLock', () => {
  it('grants 5 waiters from 2 clients in arrival order', async () => {
    const a = client();
    const b = client();
    const name = 'fair:order';
    const held = await a.getFairLock(name).acquire({ leaseTime: 30_000 });
    const order: number[] = [];
    const waiters: Promise<void>[] = [];
    for (let i = 1; i <= 5; i++) {
      const lock = (i % 2 === 1 ? a : b).getFairLock(name);
      waiters.push(
        lock.acquire({ waitTime: 30_000 }).then(async (handle) => {
          order.push(i);
          await delay(20);
          await handle.release();
        }),
      );
      await queued(name, i); // arrival order is the order of joining the queue
    }
    expect((await queueOf(name)).map((owner) => owner.slice(0, 36))).toEqual([a.id, b.id, a.id, b.id, a.id]);
    const releasedAt = performance.now();
    await held.release();
    await Promise.all(waiters);
    expect(order).toEqual([1, 2, 3, 4, 5]);
    // Each hand-off is a message to the next head, not a wait for a lease: far below 30 s.
    expect(performance.now() - releasedAt).toBeLessThan(15_000);
    await noQueueLeft(name);
    expect(await admin().exists(name)).toBe(0);
    expectIdle(a);
    expectIdle(b);
  });

  it('stores Redisson\'s keys, fields, deadlines and channels, and moves deadlines up as the queue advances', async () => {
    const holder = client();
    const other = client({ fairLockWaitTimeout: 60_000 });
    const name = 'fair:keys';
    const held = await holder.getFairLock(name).acquire({ leaseTime: 20_000 });
    expect(await admin().hgetall(name)).toEqual({ [`${holder.id}:${held.threadId}`]: '1' });

    const first = `${other.id}:7`;
    const second = `${other.id}:9`;
    const before = Date.now();
    const firstWaits = other.getFairLock(name).tryLock({ waitTime: 10_000, threadId: 7 });
    await queued(name, 1);
    const after = Date.now();
    const secondWaits = other.getFairLock(name).lock({ threadId: 9 }); // slack: fairLockWaitTimeout
    await queued(name, 2);

    expect(await queueOf(name)).toEqual([first, second]);
    const deadlines = await deadlinesOf(name);
    // The first deadline: the holder's remaining lease plus the waiter's own wait time, from now.
    expect(deadlines.get(first)).toBeGreaterThan(before + 10_000 + 15_000);
    expect(deadlines.get(first)).toBeLessThanOrEqual(after + 10_000 + 20_000);
    // Each next one: one slack after the waiter ahead's.
    expect(deadlines.get(second)).toBe(deadlines.get(first)! + 60_000);
    expect([...(await admin().keys('*'))].sort()).toEqual([name, fairLockQueue(name), fairLockTimeouts(name)].sort());
    expect(fairLockQueue(name)).toBe('redisson_lock_queue:{fair:keys}');
    expect(fairLockTimeouts(name)).toBe('redisson_lock_timeout:{fair:keys}');
    expect(fairLockQueue('{t1}:job')).toBe('redisson_lock_queue:{t1}:job');
    expect(fairWaiterChannel('{t1}:job', first)).toBe(`redisson_lock__channel:{t1}:job:${first}`);

    // Each waiter listens on its own channel; nobody on RLock's.
    await eventually(async () => (await subscriberCount(admin(), fairWaiterChannel(name, second))) === 1, 5_000, 'a subscriber');
    expect(await subscriberCount(admin(), `redisson_lock__channel:{fair:keys}:${first}`)).toBe(1);
    expect(await subscriberCount(admin(), lockChannel(name))).toBe(0);

    await held.release();
    expect(await firstWaits).toBe(true);
    expect(await admin().hgetall(name)).toEqual({ [first]: '1' });
    expect(await queueOf(name)).toEqual([second]);
    // The queue advanced one place: the next deadline comes closer by the acquirer's slack.
    expect((await deadlinesOf(name)).get(second)).toBe(deadlines.get(second)! - 10_000);

    await other.getFairLock(name).unlock({ threadId: 7 });
    await secondWaits;
    expect(await admin().hgetall(name)).toEqual({ [second]: '1' });
    await noQueueLeft(name);
    await other.getFairLock(name).unlock({ threadId: 9 });
    expect(await admin().exists(name)).toBe(0);
  });

  it('takes a waiter that times out or is aborted out of the queue and moves those behind it up', async () => {
    const holder = client();
    const waiter = client({ fairLockWaitTimeout: 60_000 });
    const name = 'fair:give-up';
    const held = await holder.getFairLock(name).acquire({ leaseTime: 30_000 });
    const lock = () => waiter.getFairLock(name);
    const owner = (threadId: number) => `${waiter.id}:${threadId}`;

    const w1 = lock().acquire({ threadId: 1 });
    await queued(name, 1);
    const w2 = lock().tryLock({ threadId: 2, waitTime: 1_500 });
    await queued(name, 2);
    const controller = new AbortController();
    const w3 = lock().lock({ threadId: 3, signal: controller.signal });
    await queued(name, 3);
    const w4 = lock().acquire({ threadId: 4 });
    await queued(name, 4);
    const start = await deadlinesOf(name);

    // Time-out: resolved only once Redis is cleaned up.
    expect(await w2).toBe(false);
    expect(await queueOf(name)).toEqual([owner(1), owner(3), owner(4)]);
    let now = await deadlinesOf(name);
    expect([...now.keys()].sort()).toEqual([owner(1), owner(3), owner(4)].sort());
    expect(now.get(owner(1))).toBe(start.get(owner(1)));
    expect(now.get(owner(3))).toBe(start.get(owner(3))! - 1_500);
    expect(now.get(owner(4))).toBe(start.get(owner(4))! - 1_500);

    // Abort: rejects at once; the clean-up follows.
    const reason = new Error('no longer needed');
    controller.abort(reason);
    await expect(w3).rejects.toBe(reason);
    await eventually(async () => (await admin().llen(fairLockQueue(name))) === 2, 5_000, 'the aborted waiter gone');
    expect(await queueOf(name)).toEqual([owner(1), owner(4)]);
    now = await deadlinesOf(name);
    expect([...now.keys()].sort()).toEqual([owner(1), owner(4)].sort());
    expect(now.get(owner(4))).toBe(start.get(owner(4))! - 1_500 - 60_000);

    await held.release();
    const h1 = await w1;
    await h1.release();
    const h4 = await w4;
    await h4.release();
    await noQueueLeft(name);
    expect(await admin().keys('*')).toEqual(expect.not.arrayContaining([name]));
    expectIdle(waiter);
  });

  it('a single attempt never joins the queue', async () => {
    const holder = client();
    const other = client();
    const name = 'fair:single';
    const held = await holder.getFairLock(name).acquire({ leaseTime: 30_000 });
    expect(await other.getFairLock(name).tryLock()).toBe(false);
    expect(await other.getFairLock(name).tryAcquire()).toBeNull();
    expect(await admin().exists(fairLockQueue(name), fairLockTimeouts(name))).toBe(0);
    await held.release();
  });

  it('a waiter whose process was killed blocks the others only until its deadline passes', async () => {
    const holder = client();
    const others = client();
    const name = 'fair:dead-waiter';
    const slack = 1_000;
    const held = await holder.getFairLock(name).acquire({ leaseTime: 3_000 });
    const child = spawn(process.execPath, [FAIR_WAITER, server().url, name, String(slack), '5'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    try {
      const [line] = (await once(child.stdout, 'data')) as [Buffer];
      const dead = line.toString().split('\n')[0]!;
      await queued(name, 1);
      expect(await queueOf(name)).toEqual([dead]);

      const order: number[] = [];
      const waiting: Promise<void>[] = [];
      for (const i of [1, 2]) {
        waiting.push(
          others.getFairLock(name).acquire({ waitTime: 30_000 }).then(async (handle) => {
            order.push(i);
            await handle.release();
          }),
        );
        await queued(name, i + 1);
      }
      const deadline = (await deadlinesOf(name)).get(dead)!;

      child.kill('SIGKILL');
      await once(child, 'exit');
      expect(stderr).toBe('');
      await held.release(); // wakes the dead head: nobody listens

      await Promise.all(waiting);
      const took = Date.now();
      expect(order).toEqual([1, 2]);
      // Fair to the dead waiter until its deadline, and not much longer (re-checks at least every second).
      expect(took).toBeGreaterThanOrEqual(deadline - 50);
      expect(took).toBeLessThan(deadline + 5_000);
      await noQueueLeft(name);
      expect(await admin().exists(name)).toBe(0);
      expectIdle(others);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('unlocking a lock nobody holds wakes the head as Redisson does, and still says it was not held', async () => {
    const redisson = client();
    const name = 'fair:free-unlock';
    const head = 'c0ffee00-0000-4000-8000-000000000000:1';
    await admin().rpush(fairLockQueue(name), head);
    await admin().zadd(fairLockTimeouts(name), Date.now() + 60_000, head);
    const listener = server().connect();
    try {
      const messages: string[] = [];
      listener.on('message', (_channel: string, message: string) => messages.push(message));
      await listener.subscribe(fairWaiterChannel(name, head));
      await expect(redisson.getFairLock(name).unlock({ threadId: 3 })).rejects.toBeInstanceOf(LockNotHeldError);
      await eventually(() => messages.length === 1, 5_000, 'the head to be woken');
      expect(messages).toEqual(['0']);
      expect(await queueOf(name)).toEqual([head]); // waking is all it does
    } finally {
      listener.disconnect();
    }
  });

  describe('a waiter coming back to its channel', () => {
    /**
     * `turns` contended acquisitions by one owner scope of `worker`, each behind a hold of another
     * client released once the worker is parked; resolves the worker's own channel and the SUBSCRIBE
     * calls Redis saw meanwhile.
     */
    async function contendedTurns(worker: RedissonClient, name: string, turns: number, scoped = true) {
      const holder = client();
      let channel = '';
      const before = await commandCounts(admin());
      const loop = async () => {
        for (let turn = 0; turn < turns; turn++) {
          const held = await holder.getFairLock(name).acquire();
          const waiting = worker.getFairLock(name).acquire();
          await eventually(() => worker.diagnostics().waiters === 1, 5_000, 'the worker parked');
          await held.release();
          const handle = await waiting;
          channel = fairWaiterChannel(name, `${worker.id}:${handle.threadId}`);
          await handle.release();
        }
      };
      await (scoped ? worker.run(loop) : loop());
      const subscribes = commandsBetween(before, await commandCounts(admin())).subscribe ?? 0;
      return { channel, subscribes };
    }

    it('finds it still subscribed within the linger: one SUBSCRIBE, and two attempts a turn after the first', async () => {
      const worker = client({ fairLockChannelLinger: 60_000 });
      const attempts: number[] = [];
      worker.on('acquired', (event) => attempts.push(event.attempts));
      const { channel, subscribes } = await contendedTurns(worker, 'fair:linger', 3);
      // The first turn joins the queue, closes the race with a release once subscribed, and is
      // woken; later turns join (their channel heard every release since) and are woken.
      expect(attempts).toEqual([3, 2, 2]);
      expect(subscribes).toBe(1);
      expect(worker.diagnostics()).toEqual({ channels: 0, waiters: 0, leases: 0 }); // lingering is not waiting
      expect(await subscriberCount(admin(), channel)).toBe(1);
      await worker.shutdown();
      await eventually(async () => (await subscriberCount(admin(), channel)) === 0, 5_000, 'the channel gone on shutdown');
    });

    it('unsubscribes it once the linger is over', async () => {
      const worker = client({ fairLockChannelLinger: 50 });
      const { channel } = await contendedTurns(worker, 'fair:linger-over', 1);
      await eventually(async () => (await subscriberCount(admin(), channel)) === 0, 5_000, 'the channel gone after the linger');
      expect(await admin().pubsub('CHANNELS', '*')).toEqual([]);
    });

    it('does not keep the channel of an owner nobody gave (it never comes back)', async () => {
      const worker = client({ fairLockChannelLinger: 60_000 });
      const { channel, subscribes } = await contendedTurns(worker, 'fair:no-linger', 2, false);
      expect(subscribes).toBe(2); // a fresh owner, and channel, each time
      await eventually(async () => (await subscriberCount(admin(), channel)) === 0, 5_000, 'the channel gone at once');
    });
  });
});

describe('NonReentrantFairLock', () => {
  it('rejects the holder\'s second acquire at once with LockReentryError while another owner waits as usual', async () => {
    const redisson = client();
    const other = client();
    const name = 'fair:non-reentrant';
    const lock = redisson.getNonReentrantFairLock(name);
    let handle!: Handle;
    let waiting!: Promise<boolean>;
    await redisson.run(async () => {
      handle = await lock.acquire();
      waiting = other.getNonReentrantFairLock(name).tryLock({ waitTime: 30_000 });
      await queued(name, 1);
      for (const again of [
        () => lock.lock(),
        () => lock.tryLock(),
        () => lock.tryLock({ waitTime: 10_000 }),
        () => lock.acquire(),
        () => lock.using(() => 'never runs'),
      ]) {
        const startedAt = performance.now();
        const error = await again().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(LockReentryError);
        expect(error).toMatchObject({ code: 'ERR_LOCK_REENTRY', lockName: name, owner: `${redisson.id}:${handle.threadId}` });
        expect(performance.now() - startedAt).toBeLessThan(2_000);
      }
      expect(await lock.getHoldCount()).toBe(1);
      expect(await admin().hgetall(name)).toEqual({ [`${redisson.id}:${handle.threadId}`]: '1' });
    });
    // The refused attempts never queued; the other owner still waits, first in line.
    expect((await queueOf(name)).map((owner) => owner.slice(0, 36))).toEqual([other.id]);
    await handle.release();
    expect(await waiting).toBe(true);
    await other.getNonReentrantFairLock(name).unlock();
    await noQueueLeft(name);
    expect(await admin().exists(name)).toBe(0);
  });

  it('is a FairLock with its own factory', () => {
    const redisson = client();
    const lock: RFairLock = redisson.getNonReentrantFairLock('fair:kind');
    expect(lock.constructor.name).toBe('RNonReentrantFairLock');
    expect(redisson.getFairLock('fair:kind').constructor.name).toBe('RFairLock');
  });
});
