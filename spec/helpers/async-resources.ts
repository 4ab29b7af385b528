import { createHook, executionAsyncId } from 'node:async_hooks';

/**
 * Counts the async resources (`PROMISE`, `Timeout`, `Immediate`, ...) that the caller's code creates
 * from now on, by type, until `stop()`, which returns the counts. Only resources descending from the
 * caller's async context count, so the test runner's own timers do not; with `wholeProcess`, every
 * resource counts, also those made in callbacks of sockets opened before (a wake-up by a message).
 */
export function countAsyncResources(options: { wholeProcess?: boolean } = {}): { stop(): Record<string, number> } {
  const counts: Record<string, number> = {};
  const ours = new Set([executionAsyncId()]);
  const hook = createHook({
    init(asyncId, type, triggerAsyncId) {
      if (!options.wholeProcess && !ours.has(triggerAsyncId) && !ours.has(executionAsyncId())) return;
      ours.add(asyncId);
      counts[type] = (counts[type] ?? 0) + 1;
    },
  }).enable();
  return {
    stop() {
      hook.disable();
      return counts;
    },
  };
}
