import pDefer from 'p-defer';
import { MAX_TIME_MS } from '../options';

/**
 * A promise settled by its owner, unless its time limit passes or one of its signals aborts first.
 * Whichever way it ends, its timer and abort listeners are removed at once, so an abandoned wait
 * leaves nothing behind. One object per wait, with no closures of its own.
 */
export class Guarded<T> {
  /** Settles when the owner, the time limit or a signal settles it. */
  readonly promise: Promise<T>;
  private readonly deferred = pDefer<T>();
  private readonly signals: readonly (AbortSignal | undefined)[];
  private timer: NodeJS.Timeout | undefined;
  private done = false;

  /**
   * @param timeoutMs time limit; `Infinity` sets no timer. Longer limits fire early, at Node's timer maximum.
   * @param onTimeout called once when the time limit passes first; it must settle the promise.
   * @param signals any of these aborting first rejects the promise with its `reason`.
   */
  constructor(
    timeoutMs: number,
    private readonly onTimeout: (guarded: Guarded<T>) => void,
    ...signals: (AbortSignal | undefined)[]
  ) {
    this.promise = this.deferred.promise;
    this.signals = signals;
    const aborted = signals.find((signal) => signal?.aborted);
    if (aborted) {
      this.done = true;
      this.deferred.reject(aborted.reason);
      return;
    }
    for (const signal of signals) signal?.addEventListener('abort', this, { once: true });
    if (Number.isFinite(timeoutMs)) {
      this.timer = setTimeout(fireTimeout, Math.min(Math.max(timeoutMs, 0), MAX_TIME_MS), this);
      this.timer.unref();
    }
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

  /** @internal Called by the timer. */
  expire(): void {
    this.timer = undefined;
    if (!this.done) this.onTimeout(this);
  }

  private finish(): boolean {
    if (this.done) return false;
    this.done = true;
    if (this.timer) clearTimeout(this.timer);
    for (const signal of this.signals) signal?.removeEventListener('abort', this);
    return true;
  }
}

function fireTimeout(guarded: { expire(): void }): void {
  guarded.expire();
}

/** Settles as `promise` does, unless `ms` pass first (rejects with `onTimeout()`) or a signal aborts. */
export function within<T>(
  promise: Promise<T>,
  ms: number,
  onTimeout: () => Error,
  ...signals: (AbortSignal | undefined)[]
): Promise<T> {
  const guarded = new Guarded<T>(ms, (g) => g.reject(onTimeout()), ...signals);
  if (!guarded.settled) promise.then((value) => guarded.resolve(value), (reason: unknown) => guarded.reject(reason));
  return guarded.promise;
}
