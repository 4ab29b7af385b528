// Forked worker processes of the multi-process scenarios, with a message inbox each.
import { fork } from 'node:child_process';
import { track } from './procs.mjs';
import { withTimeout } from './stats.mjs';

/**
 * Forks `script` with `args` (tracked, so killed on any exit). `child.next(what, ms)` resolves its
 * next IPC message and rejects if it exits first or nothing comes within `ms`.
 */
export function forkWorker(script, args) {
  const child = track(fork(script, args, { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] }));
  const inbox = [];
  const takers = [];
  let exited;
  child.on('message', (msg) => (takers.length ? takers.shift().resolve(msg) : inbox.push(msg)));
  child.once('exit', (code, signal) => {
    exited = new Error(`worker exited (${signal ?? code}) before answering`);
    for (const taker of takers.splice(0)) taker.reject(exited);
  });
  child.next = (what = 'worker', ms = 60_000) => {
    if (inbox.length) return Promise.resolve(inbox.shift());
    if (exited) return Promise.reject(exited);
    return withTimeout(new Promise((resolve, reject) => takers.push({ resolve, reject })), ms, what);
  };
  return child;
}

/** Every child's next message, in order. */
export const allNext = (children, what, ms) => Promise.all(children.map((c) => c.next(what, ms)));

/** How long past the end of a timed run a child may take to answer (its last wait, then its report). */
const RUN_GRACE = 8_000;

/**
 * Lets every child loop until the same wall-clock time, `ms` from now; resolves their results and
 * how long the run took. `warmUp`: the children loop on objects of the warm-up's own (see
 * `processWarmUpMs`), whose results the caller drops.
 */
export async function runAllFor(children, ms, warmUp = false) {
  const start = performance.now();
  const untilMs = Date.now() + ms;
  for (const child of children) child.send({ until: untilMs, warmUp });
  const results = (await allNext(children, 'the last waits (wake-up missed?)', ms + RUN_GRACE)).map((m) => m.result);
  return { results, elapsed: performance.now() - start };
}

/** Asks children to exit, then kills what is left. */
export async function stopAll(children) {
  for (const child of children) if (child.connected) child.send({ exit: true });
  await Promise.race([Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : null))), new Promise((r) => setTimeout(r, 1_000))]);
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
}
