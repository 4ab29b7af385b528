import { createHook } from 'node:async_hooks';

/**
 * Tracks the timers (`setTimeout`/`setInterval`) created from now on, referenced or not, until
 * they fire or are cleared. `live()` counts those still pending; `stop()` ends the tracking.
 */
export function trackTimers(): { live(): number; settle(timeoutMs?: number): Promise<number>; stop(): void } {
  const pending = new Set<number>();
  const hook = createHook({
    init(asyncId, type) {
      if (type === 'Timeout') pending.add(asyncId);
    },
    destroy(asyncId) {
      pending.delete(asyncId);
    },
  }).enable();
  return {
    live: () => pending.size,
    /**
     * Waits (without timers of its own) up to `timeoutMs` for every tracked timer to end, then returns
     * how many are still pending. Destroy hooks run asynchronously, so a check right after a timer
     * fired or was cleared could still count it.
     */
    async settle(timeoutMs = 2_000) {
      const deadline = Date.now() + timeoutMs;
      while (pending.size > 0 && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
      return pending.size;
    },
    stop: () => hook.disable(),
  };
}
