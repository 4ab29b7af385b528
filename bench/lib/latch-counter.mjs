// Child process of the latch scenario: counts the latch down on request, in its own event loop.
// Argv: adapter id, url, latch name. Protocol (IPC): child sends {ready}; parent sends {countDown}; child sends
// {calledAt, doneAt} (process.hrtime: stamped as it calls countDown and as the call resolves).
import { loadAdapter } from './adapters.mjs';

const [adapterId, url, name] = process.argv.slice(2);
const adapter = await loadAdapter(adapterId);
if (adapter.error) throw new Error(adapter.error);
const latches = await adapter.setupLatch({ url });
await latches.countDown(`${name}:warm-up`);
process.on('message', async (msg) => {
  if (msg.exit) {
    await latches.teardown();
    process.exit(0);
  }
  const calledAt = process.hrtime.bigint().toString();
  await latches.countDown(name);
  process.send({ calledAt, doneAt: process.hrtime.bigint().toString() });
});
process.send({ ready: true });
