import { useRedis } from './helpers/fixture';
import { eventually, expectUnsubscribed, subscriberCount } from './helpers/redis-server';

const { admin, client } = useRedis();

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
