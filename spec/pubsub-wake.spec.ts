import { getEventListeners } from 'node:events';
import { ClientClosedError } from '../lib';
import type { Subscription } from '../lib/kernel/pubsub/manager';
import type { AttemptReport, Waiter } from '../lib/kernel/pubsub/wait-queue';
import { wakeAll, wakeCount, type WakePolicy } from '../lib/kernel/pubsub/wake';
import { useRedis } from './helpers/fixture';
import { usePubSubManager } from './helpers/pubsub-manager';
import { eventually } from './helpers/redis-server';

const { admin, server } = useRedis();

/** A waiter that counts its wake-ups, and keeps what its TTL re-checks want told. */
class CountingWaiter implements Waiter {
  prevLinked: Waiter | undefined;
  nextLinked: Waiter | undefined;
  wakes = 0;
  readonly rechecks: AttemptReport[] = [];
  wake(): void {
    this.wakes += 1;
  }
  recheck(report: AttemptReport): void {
    this.rechecks.push(report);
  }
  close(): void {}
}

describe('wake-ups a message leaves for waiters not parked', () => {
  const pubsub = usePubSubManager(server);

  /** `count` shares of `channel`, each with a waiter of its own, parked. */
  async function parkedShares(channel: string, policy: WakePolicy, count: number) {
    const parked: { subscription: Subscription; waiter: CountingWaiter }[] = [];
    for (let i = 0; i < count; i++) {
      const subscription = await pubsub().subscribe(channel, policy, 5_000);
      const waiter = new CountingWaiter();
      expect(subscription.park(waiter)).toBe(true);
      parked.push({ subscription, waiter });
    }
    return parked;
  }

  async function wokenBy(message: string, channel: string, waiters: CountingWaiter[]): Promise<void> {
    await admin().publish(channel, message);
    await eventually(() => waiters.every((waiter) => waiter.wakes === 1), 5_000, 'every parked waiter to wake');
  }

  it('keeps none when every share was parked: all re-park after a wake-all message', async () => {
    const channel = 'w:all-parked';
    const parked = await parkedShares(channel, wakeAll, 3);
    await wokenBy(
      '0',
      channel,
      parked.map(({ waiter }) => waiter),
    );
    // Parking again waits for the next message: no wake-up was kept for a waiter that did not need one.
    expect(parked.map(({ subscription, waiter }) => subscription.park(waiter))).toEqual([true, true, true]);
  });

  it('keeps none when a count exceeds the parked waiters and every share was parked', async () => {
    const channel = 'w:count-parked';
    const parked = await parkedShares(channel, wakeCount, 2);
    await wokenBy(
      '5',
      channel,
      parked.map(({ waiter }) => waiter),
    );
    expect(parked.map(({ subscription, waiter }) => subscription.park(waiter))).toEqual([true, true]);
  });

  it('keeps one for a share not parked, whose attempt may have missed the message', async () => {
    const channel = 'w:one-out';
    const subscription = await pubsub().subscribe(channel, wakeAll, 5_000);
    const waiter = new CountingWaiter();
    expect(subscription.park(waiter)).toBe(true);
    const out = await pubsub().subscribe(channel, wakeAll, 5_000);
    await wokenBy('0', channel, [waiter]);
    // The share that was out parks after the message: it goes on at once instead of waiting.
    expect(out.park(new CountingWaiter())).toBe(false);
    expect(subscription.park(waiter)).toBe(true);
  });
});

describe('many waiters awaiting one SUBSCRIBE', () => {
  const pubsub = usePubSubManager(server);

  // An AbortSignal compares each listener added with every one it has: one listener per waiter on
  // the client's lifetime signal made parking n waiters cost n², so 50,000 waiters on 1,000 locks never
  // finished parking. The shutdown rejects the waits for a SUBSCRIBE through the channels instead.
  it('adds no abort listener to the client lifetime for waiters awaiting a SUBSCRIBE', async () => {
    const lifetime = (pubsub() as unknown as { lifetime: AbortController }).lifetime.signal;
    const before = getEventListeners(lifetime, 'abort').length;
    const pending = Array.from({ length: 1_000 }, () => pubsub().subscribe('many-awaiting', wakeCount, 5_000));
    expect(getEventListeners(lifetime, 'abort').length - before).toBe(0);
    const subscriptions = await Promise.all(pending);
    for (const subscription of subscriptions) subscription.release();
    await eventually(
      async () => Number(((await admin().pubsub('NUMSUB', 'many-awaiting')) as [string, number])[1]) === 0,
      5_000,
      'the unsubscribe',
    );
  });

  it('rejects the waiters awaiting a SUBSCRIBE with ClientClosedError on shutdown', async () => {
    const pending = Array.from({ length: 10 }, () => pubsub().subscribe('closing-awaiting', wakeCount, 5_000));
    await pubsub().shutdown();
    const settled = await Promise.allSettled(pending);
    expect(
      settled.map((outcome) => outcome.status === 'rejected' && outcome.reason instanceof ClientClosedError),
    ).toEqual(Array.from({ length: 10 }, () => true));
  });
});
