// Child process of the read-write scenario: one reader or the writer of one read/write lock.
// Argv: adapter id, role (reader|writer), direct url, proxy url, lock name, counter key.
// Protocol (IPC): child sends {ready}. Parent sends {until, warmUp}: the child loops on the direct
// connection until then (on a lock and counter of the warm-up's own when `warmUp`) and sends
// {result}. Parent sends {park}: one acquisition through the proxy; the child
// sends {parked} once it waits, and {acquired} once it got the lock and gave it back. {exit} ends it.
import Redis from 'ioredis';
import { setImmediate as tick } from 'node:timers/promises';
import { loadAdapter } from './adapters.mjs';
import { countScripts, takeScriptCounts } from './script-counter.mjs';
import { sleep, until } from './stats.mjs';

const [adapterId, role, url, proxyUrl, name, counterKey] = process.argv.slice(2);
const adapter = await loadAdapter(adapterId);
if (adapter.error) throw new Error(adapter.error);
const direct = new Redis(url);
const lib = await adapter.setupReadWrite({ url });
const parked = await adapter.setupReadWrite({ url: proxyUrl });
/** Takes this child's side of the lock on `client`; resolves its release. */
const take = (client, lock = name) => (role === 'writer' ? client.write(lock) : client.read(lock));
await direct.ping();
process.send({ ready: true });

process.on('message', async (msg) => {
  if (msg.exit) {
    await Promise.race([Promise.all([lib.teardown(), parked.teardown()]), sleep(500)]);
    direct.disconnect();
    process.exit(0);
  }
  if (msg.until) process.send({ result: await loop(msg.until, msg.warmUp ? ':warm-up' : '') });
  if (msg.park) {
    const acquired = take(parked).then((release) => release());
    await until(() => parked.diagnostics().waiters === 1, 10_000, 'the waiter to park', 5);
    process.send({ parked: true });
    await acquired;
    process.send({ acquired: true });
  }
});

/**
 * During a warm-up, readers step aside for {@link STEP_ASIDE_MS} at every multiple of
 * {@link STEP_ASIDE_EVERY_MS} of the wall clock, all at once: the writer, which 8 busy readers
 * starve, then gets in and the readers wait behind it. So the wait path is compiled before the timed
 * part, as the rest is. Left cold, it was compiled during the timed part whenever the writer got in
 * there: in such runs, each of 3 library readers traced compiled 33-68 functions in its timed 2 s,
 * and 15-20 after a warm-up with these pauses.
 */
const STEP_ASIDE_EVERY_MS = 25;
const STEP_ASIDE_MS = 3;
const stepAsideAt = () => Math.ceil((Date.now() + 1) / STEP_ASIDE_EVERY_MS) * STEP_ASIDE_EVERY_MS;

/**
 * The writer: read-modify-write of the counter under the write lock (an await in between, so an
 * overlap would lose an update). A reader: reads the counter twice under the read lock with an await
 * in between; a change between the two means a writer got in while it held (a torn read). `suffix`
 * names the lock and counter of a warm-up.
 */
async function loop(untilMs, suffix) {
  const counter = counterKey + suffix;
  const stepsAside = suffix !== '' && role === 'reader';
  let nextStepAside = stepAsideAt();
  const waits = [];
  let torn = 0;
  let errors = 0;
  const cpuBefore = process.cpuUsage();
  countScripts();
  while (Date.now() < untilMs) {
    if (stepsAside && Date.now() >= nextStepAside) {
      await sleep(STEP_ASIDE_MS);
      nextStepAside = stepAsideAt();
    }
    const asked = performance.now();
    let release;
    try {
      release = await take(lib, name + suffix);
    } catch {
      errors += 1;
      continue;
    }
    waits.push(performance.now() - asked);
    const value = await direct.get(counter);
    await tick();
    if (role === 'writer') await direct.set(counter, Number(value ?? 0) + 1);
    else if ((await direct.get(counter)) !== value) torn += 1;
    await release();
  }
  const cpu = process.cpuUsage(cpuBefore);
  return { role, ops: waits.length, waits, torn, errors, scripts: takeScriptCounts(), cpuMs: (cpu.user + cpu.system) / 1000 };
}
