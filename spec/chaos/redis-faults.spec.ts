import { LockLostError, type RedissonEvents } from '../../lib';
import { delay, useRedis } from '../helpers/fixture';
import { eventually } from '../helpers/redis-server';

const { admin, client, server } = useRedis();

describe('Redis server faults', () => {
  it('restart without persistence: losses are signalled, no key comes back, waiters recover', async () => {
    const holder = client({ lockWatchdogTimeout: 600 });
    const waiter = client();
    const lost: RedissonEvents['lockLost'][] = [];
    holder.on('lockLost', (event) => lost.push(event));
    const handles = await Promise.all(['r1', 'r2'].map((name) => holder.getLock(name).acquire()));
    const waiting = waiter.getLock('r1').acquire({ waitTime: 20_000 });
    await eventually(() => waiter.diagnostics().waiters === 1, 5_000, 'a parked waiter');

    await server().restart();
    const waiterHandle = await waiting; // woken by the subscriber's reconnection, not by any message
    await eventually(() => handles.every((h) => h.signal.aborted), 5_000, 'both losses to be signalled');
    for (const handle of handles) expect(handle.signal.reason).toBeInstanceOf(LockLostError);
    expect(lost.map((e) => e.name).sort()).toEqual(['r1', 'r2']);
    await delay(1_500); // two watchdog periods: nothing re-creates the lost locks
    expect(await admin().exists('r2')).toBe(0);
    expect(Object.keys(await admin().hgetall('r1'))).toEqual([`${waiter.id}:${waiterHandle.threadId}`]);
    for (const handle of handles) await expect(handle.release()).rejects.toMatchObject({ code: 'ERR_LOCK_NOT_HELD' });
    await waiterHandle.release();
    expect(holder.diagnostics()).toEqual({ channels: 0, waiters: 0, leases: 0 });
  });

  it('restart without persistence: a holder is told as soon as its connection is back, not a watchdog period later', async () => {
    const holder = client(); // the default 30 s watchdog: renewals every 10 s
    const handle = await holder.getLock('restarted').acquire();
    await delay(200);
    await server().restart();
    const backAt = Date.now();
    const other = await client().getLock('restarted').acquire({ waitTime: 5_000 });
    await new Promise<void>((resolve) => handle.signal.addEventListener('abort', () => resolve(), { once: true }));
    // Before, the next renewal (up to 10 s on) found the loss while `other` held the lock.
    expect(Date.now() - backAt).toBeLessThan(3_000);
    expect(handle.signal.reason).toBeInstanceOf(LockLostError);
    await other.release();
  });

  it.each([
    ['DEBUG SLEEP', (ms: number) => admin().call('DEBUG', 'SLEEP', String(ms / 1000))],
    ['CLIENT PAUSE', (ms: number) => admin().call('CLIENT', 'PAUSE', String(ms), 'ALL')],
  ])('%s shorter than the lease causes no false loss; longer is signalled by the deadline', async (_, pause) => {
    const redisson = client({ lockWatchdogTimeout: 1_500 });
    const handle = await redisson.getLock('paused').acquire();
    await delay(100);
    await pause(400);
    await delay(1_600);
    expect(handle.signal.aborted).toBe(false);
    expect(await redisson.getLock('paused').isHeldByThread(handle.threadId)).toBe(true);

    const pausedAt = Date.now();
    void pause(4_000).catch(() => undefined);
    await new Promise<void>((resolve) => handle.signal.addEventListener('abort', () => resolve(), { once: true }));
    // Lost one lease after the last renewal that got through, well before the 4 s pause ends
    // (1 s of slack for timers running late on a loaded machine).
    expect(Date.now() - pausedAt).toBeLessThanOrEqual(1_500 + 1_000);
    await eventually(async () => (await admin().exists('paused')) === 0, 10_000, 'the key to expire');
    await expect(handle.release()).rejects.toMatchObject({ code: 'ERR_LOCK_NOT_HELD' });
  });
});
