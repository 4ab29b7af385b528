// Child process of the hand-off scenario: holds the lock on request, in its own event loop, so the
// release is not phase-locked to the waiter's timers. Times are process.hrtime (CLOCK_MONOTONIC,
// comparable across processes on one machine).
// Protocol (IPC): child sends {ready}; parent sends {key, holdMs}; child sends {locked}, then
// {unlockCalledAt, releasedAt} once its unlock resolved (the first stamped as it calls unlock, the
// second as the call resolves); parent sends {exit} at the end.
import { loadAdapter } from './adapters.mjs';
import { sleep } from './stats.mjs';

const [adapterId, url] = process.argv.slice(2);
const adapter = await loadAdapter(adapterId);
if (adapter.error) throw new Error(adapter.error);
const lib = await adapter.setup({ url });
process.on('message', async (msg) => {
  if (msg.exit) {
    await Promise.race([lib.teardown(), sleep(500)]);
    process.exit(0);
  }
  const release = await lib.lock(msg.key);
  process.send({ locked: true });
  await sleep(msg.holdMs);
  const unlockCalledAt = process.hrtime.bigint().toString();
  await release();
  process.send({ unlockCalledAt, releasedAt: process.hrtime.bigint().toString() });
});
process.send({ ready: true });
