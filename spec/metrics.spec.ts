import type { RedissonEvents } from '../lib';
import { delay, useRedis } from './helpers/fixture';
import { eventually } from './helpers/redis-server';

const { client } = useRedis();

/** Every event of `type` the client emits from now on. */
function record<K extends keyof RedissonEvents>(redisson: ReturnType<typeof client>, type: K): RedissonEvents[K][] {
  const events: RedissonEvents[K][] = [];
  redisson.on(type, (event) => events.push(event));
  return events;
}

describe('metrics: the figures the events carry', () => {
  it('a free lock: one attempt, no wake-up; the release reports the time held', async () => {
    const redisson = client();
    const acquired = record(redisson, 'acquired');
    const released = record(redisson, 'released');
    const handle = await redisson.getLock('m:free').acquire();
    expect(acquired).toEqual([expect.objectContaining({ name: 'm:free', attempts: 1, wakeUps: 0 })]);
    await delay(120);
    await handle.release();
    expect(released).toHaveLength(1);
    expect(released[0]!.fully).toBe(true);
    expect(released[0]!.heldMs).toBeGreaterThanOrEqual(100);
  });

  it('a waiter: its wait, its attempts and the release message that woke it', async () => {
    const holder = client();
    const waiter = client();
    const acquired = record(waiter, 'acquired');
    const held = await holder.getLock('m:busy').acquire({ leaseTime: 30_000 });
    const waiting = waiter.getLock('m:busy').acquire({ waitTime: 20_000 });
    await eventually(() => waiter.diagnostics().waiters === 1, 10_000, 'a parked waiter');
    await delay(100);
    await held.release();
    await (await waiting).release();
    expect(acquired).toHaveLength(1);
    const [event] = acquired;
    expect(event!.attempts).toBeGreaterThanOrEqual(2); // refused, then after the subscription, then woken
    expect(event!.wakeUps).toBe(1);
    expect(event!.waitMs).toBeGreaterThanOrEqual(100);
  });

  it('reports each way an acquisition can end without the lock', async () => {
    const holder = client();
    const waiter = client();
    const failed = record(waiter, 'acquireFailed');
    await holder.getLock('m:taken').lock({ leaseTime: 30_000 });
    expect(await waiter.getLock('m:taken').tryLock({ waitTime: 50 })).toBe(false);
    const controller = new AbortController();
    const aborted = waiter.getLock('m:taken').lock({ signal: controller.signal });
    await delay(50);
    controller.abort(new Error('stop'));
    await expect(aborted).rejects.toThrow('stop');
    const closing = expect(waiter.getLock('m:taken').lock()).rejects.toThrow(/shut down/);
    await delay(50);
    await waiter.shutdown();
    await closing;
    expect(failed.map((event) => event.reason)).toEqual(['timeout', 'aborted', 'closed']);
    expect(failed[0]!.waitMs).toBeGreaterThanOrEqual(45);
    expect(failed.every((event) => event.name === 'm:taken' && event.attempts >= 1)).toBe(true);
  });
});
