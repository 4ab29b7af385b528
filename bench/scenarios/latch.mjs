// 9. Count-down latch: 100 waiters in one process await a latch that another process counts down
// to zero. How long after the last count-down do all of them return (p50 over rounds), against the
// lock hand-off of the same run? And what do they cost while they wait (through the counting proxy)?
import { forkWorker, stopAll } from '../lib/children.mjs';
import { idleCost, timedDrain } from '../lib/idle.mjs';
import { breakdown, total } from '../lib/proxy-client.mjs';
import { latency, quantile, sleep, until, withTimeout } from '../lib/stats.mjs';

const NAME = 'bench:latch';

export default {
  name: 'latch',
  title: 'Count-down latch',
  takesPart: (adapter) => typeof adapter.setupLatch === 'function',
  cases: ({ quick, samples, waiters }) => {
    const n = waiters?.[0] ?? 100;
    const rounds = samples ?? (quick ? 10 : 30);
    const idleMs = quick ? 1_000 : 3_000;
    return [{ id: `${n}`, label: `${n} waiters in one process, counted down from another; ${rounds} rounds, ${idleMs / 1000} s idle`, waiters: n, rounds, idleMs }];
  },
  columns: [
    { key: 'lastP50', label: 'all released p50 ms', better: 'lower', main: true },
    { key: 'lastP99', label: 'all released p99 ms' },
    { key: 'firstP50', label: 'first released p50 ms' },
    { key: 'fromCallP50', label: 'all released from countDown call p50 ms' },
    { key: 'idleCmdsPerSec', label: 'Redis cmds/s idle (commandstats)' },
    { key: 'idleClientCmdsPerSec', label: 'waiter cmds/s idle (sent)' },
    { key: 'drainCmdsPerWaiter', label: 'release cmds/waiter (sent)' },
    { key: 'rounds', label: 'rounds' },
  ],

  async run(env, adapter, { waiters, rounds, idleMs }) {
    const counter = forkWorker(new URL('../lib/latch-counter.mjs', import.meta.url), [adapter.id, env.url, NAME]);
    const client = await adapter.setupLatch({ url: env.url });
    const proxied = await adapter.setupLatch({ url: env.proxy.url });
    /** Parks `waiters` awaits on a latch of count 1; `opened` resolves their hrtime stamps once it opens. */
    const park = async (latches) => {
      if (!(await latches.trySetCount(NAME, 1))) throw new Error('latch left set');
      const opened = Promise.all(Array.from({ length: waiters }, () => latches.await(NAME).then((ok) => {
        if (!ok) throw new Error('await returned false');
        return process.hrtime.bigint();
      })));
      opened.catch(() => undefined);
      await until(() => latches.diagnostics().waiters === waiters, 10_000, 'the waiters to park', 5);
      return { opened }; // wrapped: an async function returning the promise itself would wait for it
    };
    try {
      await counter.next('latch counter start-up', 20_000);

      // Idle, through the proxy.
      let { opened } = await park(proxied);
      await sleep(300);
      const { idleCmdsPerSec, idleClientCmdsPerSec } = await idleCost(env, idleMs);
      const { drainCounts } = await timedDrain(env, async () => {
        counter.send({ countDown: true });
        await counter.next('count-down');
        await withTimeout(opened, 10_000, 'the idle waiters\' release (wake-up missed?)');
      });

      // Release times, on a direct connection.
      const last = [];
      const first = [];
      const fromCall = [];
      for (let i = 0; i < rounds; i++) {
        ({ opened } = await park(client));
        await sleep(10 + Math.random() * 10);
        counter.send({ countDown: true });
        const { calledAt, doneAt } = await counter.next('count-down');
        const stamps = await withTimeout(opened, 10_000, `round ${i + 1}'s release (wake-up missed?)`);
        const lastAt = stamps.reduce((a, b) => (b > a ? b : a));
        const firstAt = stamps.reduce((a, b) => (b < a ? b : a));
        last.push(Number(lastAt - BigInt(doneAt)) / 1e6);
        first.push(Number(firstAt - BigInt(doneAt)) / 1e6);
        fromCall.push(Number(lastAt - BigInt(calledAt)) / 1e6);
      }
      const { p50: lastP50, p99: lastP99 } = latency(last);
      return {
        lastP50,
        lastP99,
        firstP50: quantile(first, 0.5),
        fromCallP50: quantile(fromCall, 0.5),
        idleCmdsPerSec,
        idleClientCmdsPerSec,
        drainCmdsPerWaiter: total(drainCounts) / waiters,
        rounds: last.length,
        drainSent: breakdown(drainCounts),
      };
    } finally {
      await stopAll([counter]);
      await Promise.all([client.teardown(), proxied.teardown()]);
    }
  },
};
