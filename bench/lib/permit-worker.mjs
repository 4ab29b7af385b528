// Child process of the semaphore scenario: some workers of one semaphore on one adapter instance.
// Argv: adapter id, direct url, proxy url, semaphore key, permits, workers, holders key.
// Protocol (IPC): child sends {ready}. Parent sends {until, warmUp}: each worker loops on the direct
// connection until then (on a semaphore and holders counter of the warm-up's own when `warmUp`);
// child sends {result}. Parent sends {park}: each worker acquires once through
// the proxy; child sends {parked} once they wait, and {acquired} once all got a permit and gave it
// back. {exit} ends it.
import Redis from 'ioredis';
import { setImmediate as tick } from 'node:timers/promises';
import { loadAdapter } from './adapters.mjs';
import { countScripts, takeScriptCounts } from './script-counter.mjs';
import { sleep, until } from './stats.mjs';

const [adapterId, url, proxyUrl, key, permitsArg, workersArg, holdersKey] = process.argv.slice(2);
const permits = Number(permitsArg);
const workers = Number(workersArg);
const adapter = await loadAdapter(adapterId);
if (adapter.error) throw new Error(adapter.error);
const lib = await adapter.setupSemaphore({ url });
const parked = await adapter.setupSemaphore({ url: proxyUrl });
await lib.prepare(key, permits);
await lib.prepare(`${key}:warm-up`, permits);
await parked.prepare(key, permits);
const redis = new Redis(url);
await redis.ping();
process.send({ ready: true });

process.on('message', async (msg) => {
  if (msg.exit) {
    await Promise.race([Promise.all([lib.teardown(), parked.teardown()]), sleep(500)]);
    redis.disconnect();
    process.exit(0);
  }
  if (msg.until) {
    const cpuBefore = process.cpuUsage();
    countScripts();
    const suffix = msg.warmUp ? ':warm-up' : '';
    const results = await Promise.all(Array.from({ length: workers }, () => loop(msg.until, suffix)));
    const cpu = process.cpuUsage(cpuBefore);
    process.send({ result: { workers: results, scripts: takeScriptCounts(), cpuMs: (cpu.user + cpu.system) / 1000 } });
  }
  if (msg.park) {
    const all = Promise.all(Array.from({ length: workers }, () => parked.acquire(key).then((release) => release())));
    if (parked.diagnostics) await until(() => parked.diagnostics().waiters === workers, 10_000, 'the waiters to park', 5);
    else await sleep(300);
    process.send({ parked: true });
    await all;
    process.send({ acquired: true });
  }
});

/**
 * Takes a permit, counts itself in a shared holders counter (its peak must stay at `permits`), gives
 * it back. `suffix` names the semaphore and counter of a warm-up.
 */
async function loop(untilMs, suffix) {
  const [semaphore, holders] = [key + suffix, holdersKey + suffix];
  const waits = [];
  let peak = 0;
  let errors = 0;
  while (Date.now() < untilMs) {
    const asked = performance.now();
    let release;
    try {
      release = await lib.acquire(semaphore);
    } catch {
      errors += 1;
      continue;
    }
    waits.push(performance.now() - asked);
    peak = Math.max(peak, await redis.incr(holders));
    await tick();
    await redis.decr(holders);
    await release();
  }
  return { ops: waits.length, waits, peak, errors };
}
