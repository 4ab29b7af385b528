import Redis, { type RedisOptions } from 'ioredis';
import { RedissonClient } from '../../lib';
import { delay, useRedis } from '../helpers/fixture';
import { ChaosProxy } from '../helpers/proxy';
import { eventually, expectUnsubscribed, subscriberCount } from '../helpers/redis-server';

const { admin, client, server } = useRedis();
let proxy: ChaosProxy;
const proxied: RedissonClient[] = [];
const connections: Redis[] = [];

beforeEach(async () => {
  proxy = await ChaosProxy.start(Number(new URL(server().url).port));
});
afterEach(async () => {
  await Promise.all(proxied.splice(0).map((c) => c.shutdown()));
  for (const redis of connections.splice(0)) redis.disconnect();
  await proxy.close();
});

/** A client whose connections (main first, then the subscriber) go through the proxy. */
function clientThroughProxy(connection: RedisOptions = {}): RedissonClient {
  const redis = new Redis(proxy.url, { maxRetriesPerRequest: null, ...connection });
  redis.on('error', () => undefined);
  connections.push(redis);
  const redisson = new RedissonClient(redis);
  proxied.push(redisson);
  return redisson;
}

const MAIN = 0;
const SUBSCRIBER = 1;

describe('network faults (TCP proxy)', () => {
  it('a waiter whose unlock message is dropped still gets the lock by the TTL it saw', async () => {
    const holder = client();
    const waiter = clientThroughProxy();
    const held = holder.getLock('dropped');
    await held.lock({ leaseTime: 1_500 });
    const waiting = waiter.getLock('dropped').acquire({ waitTime: 20_000 });
    await eventually(() => waiter.diagnostics().waiters === 1, 5_000, 'a parked waiter');
    proxy.set('down', { drop: true }, SUBSCRIBER);
    const start = Date.now();
    await held.unlock(); // its message never reaches the waiter
    const handle = await waiting;
    expect(Date.now() - start).toBeLessThan(1_500 + 2_000);
    await expectUnsubscribed(admin(), 'redisson_lock__channel:{dropped}');
    await handle.release();
  });

  it('a reset subscriber connection re-subscribes once and wakes its waiters', async () => {
    const holder = client();
    const waiter = clientThroughProxy();
    const held = holder.getLock('reset');
    await held.lock({ leaseTime: 30_000 });
    const waiting = [1, 2].map(() => waiter.getLock('reset').using(() => true));
    await eventually(() => waiter.diagnostics().waiters === 2, 5_000, 'two parked waiters');
    proxy.reset(SUBSCRIBER);
    await eventually(() => proxy.accepted === 3, 10_000, 'the subscriber to reconnect');
    await eventually(() => waiter.diagnostics().waiters === 2, 5_000, 'waiters to park again');
    await eventually(async () => (await subscriberCount(admin(), 'redisson_lock__channel:{reset}')) === 1, 5_000, 'the re-subscription');
    const start = Date.now();
    await held.unlock();
    await expect(Promise.all(waiting)).resolves.toEqual([true, true]);
    expect(Date.now() - start).toBeLessThan(10_000);
    await expectUnsubscribed(admin(), 'redisson_lock__channel:{reset}');
  });

  it('a lost acquire reply, re-sent after a reconnect, counts the hold once', async () => {
    const redisson = clientThroughProxy();
    const lock = redisson.getLock('resent');
    await redisson.run(async () => {
      await lock.lock();
      proxy.set('down', { drop: true }, MAIN);
      const second = lock.lock(); // lands in Redis; its reply is lost
      await eventually(async () => (await admin().hget('resent', `${redisson.id}:1`)) === '2', 5_000, 'the second hold');
      proxy.heal();
      proxy.reset(MAIN); // ioredis reconnects and sends the unanswered EVALSHA again
      await second;
      expect(await lock.getHoldCount()).toBe(2);
      await lock.unlock();
      await lock.unlock();
    });
    expect(await admin().exists('resent')).toBe(0);
    expect(redisson.diagnostics().leases).toBe(0);
  });

  it('a lost unlock reply, re-sent after a reconnect, replays its outcome instead of failing', async () => {
    const redisson = clientThroughProxy();
    const lock = redisson.getLock('unlock-resent');
    // Load the scripts first: the scenario is a reply lost after the unlock ran (were the script not
    // cached, its NOSCRIPT answer would be what is lost, and it would run only after the reconnect).
    await lock.lock();
    await lock.unlock();
    await lock.lock();
    proxy.set('down', { drop: true }, MAIN);
    const unlocking = lock.unlock();
    await eventually(async () => (await admin().exists('unlock-resent')) === 0, 5_000, 'the release to land');
    proxy.heal();
    proxy.reset(MAIN);
    await expect(unlocking).resolves.toBeUndefined();
    await eventually(async () => (await admin().keys('redisson_unlock_latch:*')).length === 0, 5_000, 'the latch to go');
    expect(redisson.diagnostics().leases).toBe(0);
  });

  it('an acquire that fails in transit (reply timed out) takes back whatever it may have taken', async () => {
    const redisson = clientThroughProxy({ commandTimeout: 300 });
    await redisson.getLock('in-transit').isLocked(); // connect first
    proxy.set('down', { drop: true }, MAIN);
    // Each attempt times out and is tried again within the wait; then the call gives up.
    const attempt = redisson.getLock('in-transit').tryLock({ waitTime: 1_000 });
    await expect(attempt).rejects.toMatchObject({ code: 'ERR_REDIS_UNAVAILABLE', cause: { message: 'Command timed out' } });
    // The acquisitions did land; the trim sent after each time-out takes it back (its reply is lost too).
    await eventually(async () => (await admin().exists('in-transit')) === 0, 5_000, 'the hold to be taken back');
    expect(redisson.diagnostics().leases).toBe(0);
  });

  it('an acquire abandoned by abort while in flight never takes the lock later', async () => {
    const redisson = clientThroughProxy();
    const lock = redisson.getLock('late');
    await lock.isLocked(); // connect first
    proxy.set('up', { latencyMs: 2_000 }, MAIN);
    const controller = new AbortController();
    const attempt = lock.lock({ signal: controller.signal });
    await delay(50);
    const abortedAt = Date.now();
    controller.abort(new Error('caller left'));
    await expect(attempt).rejects.toThrow('caller left');
    expect(Date.now() - abortedAt).toBeLessThan(1_000); // rejected at once, not when the reply came (2 s)
    // The script lands and succeeds 2 s after it was sent; then the late success is undone.
    await eventually(async () => (await admin().exists('late')) === 1, 5_000, 'the late acquisition');
    await eventually(async () => (await admin().exists('late')) === 0, 5_000, 'the late acquisition to be undone');
    expect(redisson.diagnostics().leases).toBe(0);
  });

  it('shuts down promptly while Redis is unreachable, rejecting the waiters', async () => {
    const holder = client();
    await holder.getLock('unreachable').lock({ leaseTime: 30_000 });
    const redisson = clientThroughProxy();
    const waiting = redisson.getLock('unreachable').lock();
    await eventually(() => redisson.diagnostics().waiters === 1, 5_000, 'a parked waiter');
    await proxy.close(); // every connection reset, no new one accepted: ioredis keeps reconnecting
    await delay(300);
    const started = Date.now();
    await redisson.shutdown();
    expect(Date.now() - started).toBeLessThan(2_000);
    await expect(waiting).rejects.toMatchObject({ code: 'ERR_CLIENT_CLOSED' });
  });

  it('keeps mutual exclusion through latency and fragmented writes', async () => {
    proxy.set('up', { latencyMs: 2, fragmentBytes: 7 });
    proxy.set('down', { latencyMs: 1, fragmentBytes: 5 });
    const clients = [clientThroughProxy(), clientThroughProxy()];
    await Promise.all(
      clients.flatMap((redisson) =>
        [1, 2].map(async () => {
          for (let i = 0; i < 15; i++) {
            await redisson.getLock('fragmented').using(async () => {
              const value = Number((await admin().get('count')) ?? 0);
              await delay(1);
              await admin().set('count', value + 1);
            });
          }
        }),
      ),
    );
    expect(await admin().get('count')).toBe('60');
    expect(await admin().exists('fragmented')).toBe(0);
  });
});
