import { RedissonClient, type Handle } from '../lib';
import { eventually, subscriberCount } from './helpers/redis-server';
import { startSentinel, type TestSentinel } from './helpers/sentinel';

/*
 * Redis Sentinel (one master, two replicas, three sentinels): the client works through the user's
 * Sentinel-resolved connection, and its subscriber follows that connection to a promoted replica
 * when the master dies. The tests run in order on one group; the last one kills the master.
 */

let group: TestSentinel;
const clients: RedissonClient[] = [];

beforeAll(async () => {
  group = await startSentinel();
}, 120_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.shutdown().catch(() => undefined)));
  await group?.stop();
}, 60_000);

function client(): RedissonClient {
  const redisson = new RedissonClient(group.connect());
  clients.push(redisson);
  return redisson;
}

/** The acquisition's handle, and when (Date.now()) it resolved. */
function timed(acquiring: Promise<Handle>): Promise<{ handle: Handle; at: number }> {
  return acquiring.then((handle) => ({ handle, at: Date.now() }));
}

describe('Redis Sentinel', () => {
  it('keeps the lock on the master the sentinel names, and wakes a waiter with the release message', async () => {
    const holder = client();
    const waiter = client();
    const master = group.direct(await group.masterPort());
    const held = await holder.getLock('s1').acquire({ leaseTime: 30_000 });
    expect(Object.values(await master.hgetall('s1'))).toEqual(['1']);
    const waiting = timed(waiter.getLock('s1').acquire());
    await eventually(() => waiter.diagnostics().waiters === 1, 10_000, 'a parked waiter');
    expect(await subscriberCount(master, 'redisson_lock__channel:{s1}')).toBe(1);

    await held.release();
    const released = Date.now();
    const { handle, at } = await waiting;
    expect(at - released).toBeLessThan(10_000); // the message woke it, not the 30 s lease
    await handle.release();
    expect(await master.exists('s1')).toBe(0);
    await eventually(async () => (await subscriberCount(master, 'redisson_lock__channel:{s1}')) === 0, 10_000, 'no subscriber left');
  }, 60_000);

  it('calls lock listeners for expiry and deletion on the master', async () => {
    const master = group.direct(await group.masterPort());
    await master.config('SET', 'notify-keyspace-events', 'Egx');
    const redisson = client();
    const heard: string[] = [];
    const id = await redisson.getLock('s-listened').addListener({ onExpired: (n) => heard.push(`expired:${n}`), onDeleted: (n) => heard.push(`deleted:${n}`) });
    await redisson.getLock('s-listened').lock({ leaseTime: 150, threadId: 1 });
    await eventually(() => heard.length === 1, 10_000, 'the expiry');
    await redisson.getLock('s-listened').lock({ threadId: 2 });
    await redisson.getLock('s-listened').unlock({ threadId: 2 });
    await eventually(() => heard.length === 2, 10_000, 'the deletion');
    expect(heard).toEqual(['expired:s-listened', 'deleted:s-listened']);
    await redisson.getLock('s-listened').removeListener(id);
    expect(await subscriberCount(master, '__keyevent@0__:del')).toBe(0);
  });

  it('re-subscribes a parked waiter on the promoted replica when the master dies, and wakes it there', async () => {
    const holder = client();
    const waiter = client();
    const reconnects: number[] = [];
    waiter.on('subscriberReconnected', ({ channels }) => reconnects.push(channels));
    const first = group.direct(await group.masterPort());
    const held = await holder.getLock('s2').acquire(); // watchdog lease: 30 s, renewed
    const waiting = timed(waiter.getLock('s2').acquire());
    await eventually(() => waiter.diagnostics().waiters === 1, 10_000, 'a parked waiter');
    expect(await first.wait(2, 5_000)).toBe(2); // both replicas have the lock before one takes over

    const promoted = group.direct(await group.killMaster());
    await eventually(() => reconnects.length > 0, 30_000, 'the subscriber to reconnect');
    expect(reconnects[0]).toBe(1);
    await eventually(
      async () => (await subscriberCount(promoted, 'redisson_lock__channel:{s2}')) === 1,
      10_000,
      'the re-subscription on the promoted replica',
    );
    expect(await promoted.hlen('s2')).toBe(1); // still the holder's: the waiter woken by the reconnect parks again
    await eventually(() => waiter.diagnostics().waiters === 1, 10_000, 'the waiter parked again');

    await held.release(); // on the promoted replica: the holder's connection followed the sentinel too
    const released = Date.now();
    const { handle, at } = await waiting;
    expect(at - released).toBeLessThan(10_000);
    expect(await promoted.hlen('s2')).toBe(1);
    await handle.release();
    expect(await promoted.exists('s2')).toBe(0);
    expect(waiter.diagnostics()).toEqual({ channels: 0, waiters: 0, leases: 0 });
  }, 90_000);
});
