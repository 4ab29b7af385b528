import { getEventListeners } from 'node:events';
import type { RedissonClient } from '../../lib';
import { delay } from './fixture';
import { trackTimers } from './timers';

/**
 * Runs `waits` with timers tracked. It makes its waits (time-outs, say) and returns one more left
 * waiting on `controller`'s signal, which is aborted 100 ms later and must reject with the reason.
 * Then no timer, no abort listener on the signal and nothing in `client.diagnostics()` may be left.
 */
export async function expectWaitsLeaveNothing(
  client: RedissonClient,
  controller: AbortController,
  waits: () => Promise<{ aborted: Promise<unknown> }>,
): Promise<void> {
  const timers = trackTimers();
  try {
    const { aborted } = await waits();
    await delay(100);
    const reason = new Error('caller gave up');
    controller.abort(reason);
    await expect(aborted).rejects.toBe(reason);
    expect(await timers.settle()).toBe(0);
  } finally {
    timers.stop();
  }
  expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  expect(client.diagnostics()).toEqual({ channels: 0, waiters: 0, leases: 0 });
}
