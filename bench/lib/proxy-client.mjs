// Starts lib/proxy.mjs and talks to it.
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { track } from './procs.mjs';
import { sleep } from './stats.mjs';

/** Forks a counting/delaying proxy in front of the Redis at `url`. */
export async function startProxy(url) {
  const child = track(fork(new URL('./proxy.mjs', import.meta.url), [new URL(url).port], { stdio: 'inherit' }));
  const [{ port }] = await once(child, 'message');
  const ask = async (msg) => {
    const reply = once(child, 'message');
    child.send(msg);
    return (await reply)[0].counts;
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    setDelay: (ms) => child.send({ delay: ms }),
    /** Commands counted since the last reset, by name; resets the count. */
    async take() {
      await sleep(20); // let fire-and-forget commands arrive
      return ask({ reset: true });
    },
    stop() {
      child.kill('SIGKILL');
    },
  };
}

/** Total of a `{ name: count }` map. */
export const total = (counts) => Object.values(counts).reduce((a, b) => a + b, 0);

/** `evalsha 1, del 1`: a readable breakdown of counts per operation. */
export function breakdown(counts, per = 1) {
  return Object.entries(counts)
    .sort((a, b) => b[1] - a[1])
    .map(([name, n]) => `${name} ${+(n / per).toFixed(2)}`)
    .join(', ');
}
