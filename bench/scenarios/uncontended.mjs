// 1. Uncontended lock+unlock cycles on one key from one caller.
import { breakdown, total } from '../lib/proxy-client.mjs';
import { commandStats, statsDelta } from '../lib/redis-info.mjs';
import { latency } from '../lib/stats.mjs';
import { timedCycles, warmUp } from '../lib/workloads.mjs';

/** Reply delay of the round-trip probe, ms: large against loopback and timer jitter. */
const PROBE_DELAY = 10;

export default {
  name: 'uncontended',
  title: 'Uncontended lock + unlock',
  takesPart: (adapter) => typeof adapter.setup === 'function',
  // Three short reps per rep: the rate ratio is a target, and short runs pair up closer in time.
  splitReps: 3,
  cases: ({ quick, cycles }) => [{ id: 'single', label: 'one caller, one key', cycles: cycles ?? (quick ? 500 : 1_000) }],
  columns: [
    { key: 'cyclesPerSec', label: 'cycles/s', better: 'higher', main: true },
    { key: 'p50', label: 'p50 ms' },
    { key: 'p99', label: 'p99 ms' },
    { key: 'commands', label: 'Redis cmds/cycle (commandstats)' },
    { key: 'clientCommands', label: 'client cmds/cycle' },
    { key: 'lockTrips', label: 'round trips: lock' },
    { key: 'unlockTrips', label: 'round trips: unlock' },
  ],

  async run(env, adapter, { cycles }) {
    const key = 'bench:uncontended';
    const lib = await adapter.setup({ url: env.url });
    try {
      await warmUp(async () => (await lib.lock(key))());
      const before = await commandStats(env.admin);
      const { rate, samples } = await timedCycles(cycles, async () => (await lib.lock(key))());
      const delta = statsDelta(before, await commandStats(env.admin));
      return {
        cyclesPerSec: rate,
        ...latency(samples),
        commands: total(delta) / cycles,
        commandsDetail: breakdown(delta, cycles),
        ...(await probe(env, adapter, key)),
      };
    } finally {
      await lib.teardown();
    }
  },
};

/**
 * Runs a few cycles through the proxy with every reply held back PROBE_DELAY ms: the lock's and the
 * unlock's time in delays is the number of round trips on the caller's critical path. The proxy also
 * counts the commands the client sent.
 */
async function probe(env, adapter, key) {
  const proxy = env.proxy;
  const lib = await adapter.setup({ url: proxy.url });
  try {
    await (await lib.lock(key))();
    proxy.setDelay(PROBE_DELAY);
    await (await lib.lock(key))(); // first cycle through the delay: connections settled
    await proxy.take();
    const n = 15;
    const locks = [];
    const unlocks = [];
    for (let i = 0; i < n; i++) {
      let t = performance.now();
      const release = await lib.lock(key);
      locks.push(performance.now() - t);
      t = performance.now();
      await release();
      unlocks.push(performance.now() - t);
    }
    const counts = await proxy.take();
    const trips = (samples) => Math.round((latency(samples).p50 / PROBE_DELAY) * 10) / 10;
    return {
      lockTrips: trips(locks),
      unlockTrips: trips(unlocks),
      clientCommands: total(counts) / n,
      clientCommandsDetail: breakdown(counts, n),
    };
  } finally {
    proxy.setDelay(0);
    await lib.teardown();
  }
}
