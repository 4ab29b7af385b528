// 3. Hand-off latency: from the holder's unlock resolving (and from its unlock call) to the parked
// waiter's lock resolving. Measured from the call too, so that a lock whose unlock takes two round
// trips is not flattered by starting the clock late.
// The holder runs in a child process: in one event loop its timer-driven release would line up with
// a poller's 1 ms retry timer and flatter (or penalise) polling.
import { fork } from 'node:child_process';
import { once } from 'node:events';
import Redis from 'ioredis';
import { track } from '../lib/procs.mjs';
import { latency, withTimeout } from '../lib/stats.mjs';

const KEY = 'bench:handoff';

export default {
  name: 'handoff',
  title: 'Hand-off latency',
  takesPart: (adapter) => adapter.mutex,
  // Three short reps per rep: the p50 moves with the machine's state from run to run by more than
  // the 5 % a ratio to the floor is held to, and short runs pair up closer in time.
  splitReps: 3,
  cases: ({ quick, samples }) => [
    { id: 'one-waiter', label: 'one parked waiter, holder in another process', samples: samples ?? (quick ? 30 : 60), budgetMs: quick ? 1_500 : 2_000 },
  ],
  columns: [
    { key: 'p50', label: 'hand-off p50 ms', better: 'lower', main: true },
    { key: 'p99', label: 'hand-off p99 ms' },
    { key: 'fromCallP50', label: 'from unlock call p50 ms' },
    { key: 'fromCallP99', label: 'from unlock call p99 ms' },
    { key: 'pingP50', label: 'PING p50 ms' },
    { key: 'xPing', label: 'p50 ÷ PING' },
    { key: 'samples', label: 'samples' },
  ],

  async run(env, adapter, { samples, budgetMs }) {
    const ping = await pingRoundTrip(env.url);
    const waiter = await adapter.setup({ url: env.url });
    const holder = track(fork(new URL('../lib/holder.mjs', import.meta.url), [adapter.id, env.url], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] }));
    const inbox = [];
    let wake;
    holder.on('message', (msg) => (inbox.push(msg), wake?.()));
    const next = () => withTimeout(new Promise(function take(resolve) {
      if (inbox.length) resolve(inbox.shift());
      else wake = () => take(resolve);
    }), 60_000, 'holder');
    const handoffs = [];
    const fromCall = [];
    try {
      await next(); // ready
      await (await waiter.lock(KEY))(); // warm-up
      const end = performance.now() + budgetMs;
      while (handoffs.length < samples && (handoffs.length < 10 || performance.now() < end)) {
        holder.send({ key: KEY, holdMs: 10 + Math.random() * 10 }); // the waiter parks meanwhile
        await next(); // locked
        const acquired = waiter.lock(KEY).then((release) => ({ release, at: process.hrtime.bigint() }));
        const { unlockCalledAt, releasedAt } = await next();
        const { release, at } = await acquired;
        await release();
        handoffs.push(Number(at - BigInt(releasedAt)) / 1e6);
        fromCall.push(Number(at - BigInt(unlockCalledAt)) / 1e6);
      }
    } finally {
      holder.send({ exit: true });
      await Promise.race([once(holder, 'exit'), new Promise((r) => setTimeout(r, 1_000))]);
      holder.kill('SIGKILL');
      await waiter.teardown();
    }
    const { p50, p99 } = latency(handoffs);
    const { p50: fromCallP50, p99: fromCallP99 } = latency(fromCall);
    return { p50, p99, fromCallP50, fromCallP99, pingP50: ping, xPing: p50 / ping, samples: handoffs.length };
  },
};

/** Median of sequential PING round trips on a fresh ioredis connection, ms. */
export async function pingRoundTrip(url, n = 300) {
  const redis = new Redis(url);
  try {
    for (let i = 0; i < 50; i++) await redis.ping();
    const samples = [];
    for (let i = 0; i < n; i++) {
      const t = performance.now();
      await redis.ping();
      samples.push(performance.now() - t);
    }
    return latency(samples).p50;
  } finally {
    redis.disconnect();
  }
}
