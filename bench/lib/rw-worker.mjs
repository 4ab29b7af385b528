// Child process of the read-write scenario: one reader or the writer of one read/write lock.
// Argv: role (reader|writer), direct url, proxy url, lock name, counter key.
// Protocol (IPC): child sends {ready}. Parent sends {until}: the child loops on the direct connection
// until then and sends {result}. Parent sends {park}: one acquisition through the proxy; the child
// sends {parked} once it waits, and {acquired} once it got the lock and gave it back. {exit} ends it.
import Redis from 'ioredis';
import { RedissonClient } from 'ioredisson';
import { setImmediate as tick } from 'node:timers/promises';
import { countScripts, takeScriptCounts } from './script-counter.mjs';
import { until } from './stats.mjs';

const [role, url, proxyUrl, name, counterKey] = process.argv.slice(2);
const direct = new Redis(url);
const viaProxy = new Redis(proxyUrl);
const redisson = new RedissonClient(direct);
const parkedClient = new RedissonClient(viaProxy);
const lockOf = (client) => (role === 'writer' ? client.getReadWriteLock(name).writeLock() : client.getReadWriteLock(name).readLock());
await direct.ping();
await viaProxy.ping();
process.send({ ready: true });

process.on('message', async (msg) => {
  if (msg.exit) {
    await Promise.race([Promise.all([redisson.shutdown(), parkedClient.shutdown()]), new Promise((r) => setTimeout(r, 500))]);
    process.exit(0);
  }
  if (msg.until) process.send({ result: await loop(msg.until) });
  if (msg.park) {
    const lock = lockOf(parkedClient);
    const acquired = lock.acquire().then((handle) => handle.release());
    await until(() => parkedClient.diagnostics().waiters === 1, 10_000, 'the waiter to park', 5);
    process.send({ parked: true });
    await acquired;
    process.send({ acquired: true });
  }
});

/**
 * The writer: read-modify-write of the counter under the write lock (an await in between, so an
 * overlap would lose an update). A reader: reads the counter twice under the read lock with an await
 * in between; a change between the two means a writer got in while it held (a torn read).
 */
async function loop(untilMs) {
  const lock = lockOf(redisson);
  const waits = [];
  let torn = 0;
  let errors = 0;
  const cpuBefore = process.cpuUsage();
  countScripts();
  while (Date.now() < untilMs) {
    const asked = performance.now();
    let handle;
    try {
      handle = await lock.acquire();
    } catch {
      errors += 1;
      continue;
    }
    waits.push(performance.now() - asked);
    const value = await direct.get(counterKey);
    await tick();
    if (role === 'writer') await direct.set(counterKey, Number(value ?? 0) + 1);
    else if ((await direct.get(counterKey)) !== value) torn += 1;
    await handle.release();
  }
  const cpu = process.cpuUsage(cpuBefore);
  return { role, ops: waits.length, waits, torn, errors, scripts: takeScriptCounts(), cpuMs: (cpu.user + cpu.system) / 1000 };
}
