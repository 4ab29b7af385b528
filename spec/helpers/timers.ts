import { createHook } from 'node:async_hooks';

/**
 * Tracks the timers (`setTimeout`/`setInterval`) created from now on, referenced or not, until
 * they fire or are cleared. `live()` counts those still pending; `stop()` ends the tracking.
 */
export function trackTimers(): { live(): number; stop(): void } {
  const pending = new Set<number>();
  const hook = createHook({
    init(asyncId, type) {
      if (type === 'Timeout') pending.add(asyncId);
    },
    destroy(asyncId) {
      pending.delete(asyncId);
    },
  }).enable();
  return { live: () => pending.size, stop: () => hook.disable() };
}
