import pDefer from 'p-defer';
import { MAX_TIME_MS } from '../options';

/** Settles a {@link guarded} promise. */
export interface Settle<T> {
  resolve(value: T): void;
  reject(reason: unknown): void;
}

/** How a {@link guarded} promise may end besides its own settlement. */
export interface Guard<T> {
  /** Time limit in ms; `Infinity` sets no timer. Longer limits fire early, at Node's timer maximum. */
  timeoutMs: number;
  /** Called once when the time limit passes first. */
  onTimeout(settle: Settle<T>): void;
  /** Any of these aborting first rejects the promise with its `reason`. */
  signals: readonly (AbortSignal | undefined)[];
}

/**
 * A promise that `attach` settles, unless its time limit passes or one of its signals aborts first.
 * Whichever way it ends, its timer, its abort listeners and whatever `attach` returned as clean-up
 * are removed at once, so an abandoned wait leaves nothing behind.
 */
export function guarded<T>(
  attach: (settle: Settle<T>) => (() => void) | void,
  { timeoutMs, onTimeout, signals }: Guard<T>,
): Promise<T> {
  const deferred = pDefer<T>();
  const aborted = signals.find((signal) => signal?.aborted);
  if (aborted) {
    deferred.reject(aborted.reason);
    return deferred.promise;
  }

  let detach: (() => void) | void;
  let timer: NodeJS.Timeout | undefined;
  let done = false;
  const finish = (then: () => void): void => {
    if (done) return;
    done = true;
    if (timer) clearTimeout(timer);
    for (const signal of signals) signal?.removeEventListener('abort', onAbort);
    detach?.();
    then();
  };
  const settle: Settle<T> = {
    resolve: (value) => finish(() => deferred.resolve(value)),
    reject: (reason) => finish(() => deferred.reject(reason)),
  };
  function onAbort(this: AbortSignal): void {
    settle.reject(this.reason);
  }

  for (const signal of signals) signal?.addEventListener('abort', onAbort, { once: true });
  if (Number.isFinite(timeoutMs)) {
    timer = setTimeout(() => finish(() => onTimeout(passThrough(deferred))), Math.min(Math.max(timeoutMs, 0), MAX_TIME_MS));
    timer.unref();
  }
  detach = attach(settle);
  if (done) detach?.();
  return deferred.promise;
}

/** Resolves after `ms` unless a signal aborts first. */
export function sleep(ms: number, ...signals: (AbortSignal | undefined)[]): Promise<void> {
  return guarded<void>(() => undefined, { timeoutMs: ms, onTimeout: (settle) => settle.resolve(), signals });
}

/** Settles as `promise` does, unless `ms` pass first (rejects with `onTimeout()`) or a signal aborts. */
export function within<T>(
  promise: Promise<T>,
  ms: number,
  onTimeout: () => Error,
  ...signals: (AbortSignal | undefined)[]
): Promise<T> {
  return guarded<T>(
    (settle) => {
      promise.then(settle.resolve, settle.reject);
    },
    { timeoutMs: ms, onTimeout: (settle) => settle.reject(onTimeout()), signals },
  );
}

function passThrough<T>(deferred: pDefer.DeferredPromise<T>): Settle<T> {
  return { resolve: deferred.resolve, reject: deferred.reject };
}
