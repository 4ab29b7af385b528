// Child process of the contended scenario: one counter worker on its own adapter instance.
// Protocol (IPC): child sends {ready}; parent sends {warmUntil}; child contends for the warm-up lock
// until then (see `warmedUp`), sends {warmed}; parent sends {until}; child sends {result} and exits.
import { once } from 'node:events';
import Redis from 'ioredis';
import { loadAdapter } from './adapters.mjs';
import { countScripts, takeScriptCounts } from './script-counter.mjs';
import { counterWorker, warmUpLock } from './workloads.mjs';

const [adapterId, url, lockKey, counterKey] = process.argv.slice(2);
const adapter = await loadAdapter(adapterId);
if (adapter.error) throw new Error(adapter.error);
const lib = await adapter.setup({ url });
const redis = new Redis(url);
await redis.ping();
process.send({ ready: true });
const [{ warmUntil }] = await once(process, 'message');
await counterWorker(lib, redis, { ...warmUpLock(lockKey, counterKey), until: warmUntil });
process.send({ warmed: true });
const [{ until }] = await once(process, 'message');
const cpuBefore = process.cpuUsage();
countScripts();
const result = await counterWorker(lib, redis, { lockKey, counterKey, until });
const scripts = takeScriptCounts();
const cpu = process.cpuUsage(cpuBefore);
process.send({ result: { ...result, scripts, cpuMs: (cpu.user + cpu.system) / 1000 } });
await Promise.race([lib.teardown(), new Promise((resolve) => setTimeout(resolve, 500))]);
redis.disconnect();
process.exit(0); // some peers leave timers behind
