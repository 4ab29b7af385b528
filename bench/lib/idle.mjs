// What parked waiters cost while nothing happens: the idle window the idle-waiters, read-write,
// semaphore, latch and redlock scenarios measure once their waiters are parked.
import { total } from './proxy-client.mjs';
import { commandStats, statsDelta } from './redis-info.mjs';
import { sleep } from './stats.mjs';

/**
 * Waits `idleMs` and returns what it cost: Redis commands per second (commandstats, so with the
 * calls scripts make), commands per second sent through the proxy (by the proxied waiters), and
 * this process's CPU as a percentage of one core.
 */
export async function idleCost(env, idleMs) {
  await env.proxy.take();
  const stats0 = await commandStats(env.admin);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await sleep(idleMs);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return {
    idleCmdsPerSec: total(statsDelta(stats0, await commandStats(env.admin))) / seconds,
    idleClientCmdsPerSec: total(await env.proxy.take()) / seconds,
    cpuPct: ((cpu.user + cpu.system) / 1e6 / seconds) * 100,
  };
}

/** Runs `drain` (releases, then waiting for the waiters) and returns how long it took and what the proxied waiters sent meanwhile. */
export async function timedDrain(env, drain) {
  const t0 = performance.now();
  await drain();
  const drainMs = performance.now() - t0;
  return { drainMs, drainCounts: await env.proxy.take() };
}
