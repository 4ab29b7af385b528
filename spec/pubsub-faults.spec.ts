import Redis from 'ioredis';
import { RedissonClient } from '../lib';
import { SubscribeTimeoutError } from '../lib/kernel/pubsub/manager';
import { useRedis } from './helpers/fixture';
import { ChaosProxy } from './helpers/proxy';
import { eventually, expectUnsubscribed, subscriberCount } from './helpers/redis-server';

const { admin, client, server } = useRedis();

describe('subscriber connection faults', () => {
  it('wakes every waiter after CLIENT KILL TYPE pubsub, with one subscription per channel', async () => {
    const holder = client();
    const waiters = client();
    const reconnected: number[] = [];
    waiters.on('subscriberReconnected', ({ channels }) => reconnected.push(channels));
    const a = holder.getLock('kill-a');
    const b = holder.getLock('kill-b');
    await a.lock({ leaseTime: 30_000 });
    await b.lock({ leaseTime: 30_000 });
    const acquired = [
      waiters.getLock('kill-a').using(() => 'a'),
      waiters.getLock('kill-a').using(() => 'a'),
      waiters.getLock('kill-b').using(() => 'b'),
    ];
    await eventually(() => waiters.diagnostics().waiters === 3, 5_000, 'three parked waiters');

    expect(await admin().client('KILL', 'TYPE', 'pubsub')).toBeGreaterThanOrEqual(1);
    await eventually(() => reconnected.length === 1, 10_000, 'the subscriber to reconnect');
    expect(reconnected).toEqual([2]);
    await eventually(() => waiters.diagnostics().waiters === 3, 5_000, 'waiters to park again');
    expect(await subscriberCount(admin(), 'redisson_lock__channel:{kill-a}')).toBe(1);
    expect(await subscriberCount(admin(), 'redisson_lock__channel:{kill-b}')).toBe(1);

    const start = performance.now();
    await a.unlock();
    await b.unlock();
    expect((await Promise.all(acquired)).sort()).toEqual(['a', 'a', 'b']);
    // Leases were 30 s: finishing well within that means the unlock messages woke them.
    expect(performance.now() - start).toBeLessThan(10_000);
    await expectUnsubscribed(admin(), 'redisson_lock__channel:{kill-a}');
    await expectUnsubscribed(admin(), 'redisson_lock__channel:{kill-b}');
    expect(waiters.diagnostics()).toEqual({ channels: 0, waiters: 0, leases: 0 });
  });

  it('wakes waiters whose unlock message was lost while the subscriber was away', async () => {
    const holder = client();
    const waiters = client();
    const lock = holder.getLock('gap');
    await lock.lock({ leaseTime: 30_000 });
    const start = performance.now();
    const acquired = waiters.getLock('gap').using(() => true);
    await eventually(() => waiters.diagnostics().waiters === 1, 5_000, 'a parked waiter');
    await admin().client('KILL', 'TYPE', 'pubsub');
    await lock.unlock(); // published while nobody from `waiters` is subscribed
    await expect(acquired).resolves.toBe(true);
    expect(performance.now() - start).toBeLessThan(10_000);
  });
});

describe('a SUBSCRIBE that goes unanswered', () => {
  it('falls back to TTL-bounded re-checks once the subscription time limit passes, and says so', async () => {
    const proxy = await ChaosProxy.start(Number(new URL(server().url).port));
    const redis = new Redis(proxy.url, { maxRetriesPerRequest: null });
    const logged: { message: string; error: unknown }[] = [];
    const logger = {
      debug: (message: string, details?: { error?: unknown }) => logged.push({ message, error: details?.error }),
    };
    const redisson = new RedissonClient(redis, { subscriptionTimeout: 300, logger });
    let hold: () => void = () => undefined;
    try {
      // One wait first, so that the subscriber connection (the proxy's second) exists.
      const warmUp = await client().getLock('unanswered:warm-up').acquire({ leaseTime: 200 });
      await (await redisson.getLock('unanswered:warm-up').acquire()).release();
      await warmUp.release().catch(() => undefined); // its lease may have run out already
      expect(proxy.accepted).toBe(2);
      // From now on the subscriber hears nothing back: its SUBSCRIBE replies are held.
      proxy.set('down', { until: new Promise<void>((resolve) => (hold = resolve)) }, 1);
      await client().getLock('unanswered').acquire({ leaseTime: 2_000 }); // runs out; no message
      const start = performance.now();
      const handle = await redisson.getLock('unanswered').acquire({ waitTime: 20_000 });
      const waited = performance.now() - start;
      expect(waited).toBeGreaterThanOrEqual(300);
      expect(waited).toBeLessThan(10_000);
      const fallback = logged.find(({ message }) => message.startsWith('subscription failed'));
      expect(fallback?.error).toBeInstanceOf(SubscribeTimeoutError);
      await handle.release();
    } finally {
      hold();
      await redisson.shutdown();
      redis.disconnect();
      await proxy.close();
    }
  });
});
