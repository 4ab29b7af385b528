import pDefer from 'p-defer';
import type { Timed, TimerQueue } from './timer-queue';

/**
 * A promise settled by its owner, unless its time limit passes or one of its signals aborts first.
 * Whichever way it ends, its place in the timer queue and its abort listeners are removed at once,
 * so an abandoned wait leaves nothing behind. One object per wait, with no closures of its own.
 */
export class Guarded<T> implements Timed {
  /** Settles when the owner, the time limit or a signal settles it. */
  readonly promise: Promise<T>;
  /** @internal The timer queue's (see {@link Timed}). */
  dueAt = 0;
  /** @internal The timer queue's (see {@link Timed}). */
  queueIndex = -1;
  private readonly deferred = pDefer<T>();
  private done = false;

  /**
   * @param timers keeps the time limit.
   * @param timeoutMs time limit; `Infinity` sets none.
   * @param onTimeout called once when the time limit passes first; it must settle the promise.
   * @param signals any of these aborting first rejects the promise with its `reason`.
   */
  constructor(
    private readonly timers: TimerQueue,
    timeoutMs: number,
    private readonly onTimeout: (guarded: Guarded<T>) => void,
    private readonly signals: readonly (AbortSignal | undefined)[],
  ) {
    this.promise = this.deferred.promise;
    const aborted = signals.find((signal) => signal?.aborted);
    if (aborted) {
      this.done = true;
      this.deferred.reject(aborted.reason);
      return;
    }
    for (const signal of signals) signal?.addEventListener('abort', this, { once: true });
    timers.schedule(this, Math.max(timeoutMs, 0));
  }

  /** Whether the promise has settled. */
  get settled(): boolean {
    return this.done;
  }

  /** Resolves the promise unless it has settled. */
  resolve(value: T): void {
    if (this.finish()) this.deferred.resolve(value);
  }

  /** Rejects the promise unless it has settled. */
  reject(reason: unknown): void {
    if (this.finish()) this.deferred.reject(reason);
  }

  /** Abort listener (an object listener, so no closure is needed). */
  handleEvent(event: Event): void {
    this.reject((event.target as AbortSignal).reason);
  }

  /** @internal The time limit passed. */
  timeUp(): void {
    if (!this.done) this.onTimeout(this);
  }

  private finish(): boolean {
    if (this.done) return false;
    this.done = true;
    this.timers.cancel(this);
    for (const signal of this.signals) signal?.removeEventListener('abort', this);
    return true;
  }
}

/**
 * Settles as `promise` does, unless `ms` pass first on `timers` (rejects with `onTimeout()`) or a
 * signal aborts.
 */
export function within<T>(
  timers: TimerQueue,
  promise: Promise<T>,
  ms: number,
  onTimeout: () => Error,
  ...signals: (AbortSignal | undefined)[]
): Promise<T> {
  const guarded = new Guarded<T>(timers, ms, (g) => g.reject(onTimeout()), signals);
  if (!guarded.settled)
    promise.then(
      (value) => guarded.resolve(value),
      (reason: unknown) => guarded.reject(reason),
    );
  return guarded.promise;
}
