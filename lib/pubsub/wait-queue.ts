import { guarded, type Settle } from '../util/guarded';

/**
 * Local FIFO of waiters on one channel. A wake-up that finds fewer parked waiters than it may wake
 * is kept as a permit (up to a cap), so a waiter that parks just after a message still retries at once.
 */
export class WaitQueue {
  private readonly parked = new Set<Settle<boolean>>();
  private permits = 0;
  private closedWith: Error | undefined;

  /** Number of parked waiters. */
  get size(): number {
    return this.parked.size;
  }

  /**
   * Parks until woken (resolves `true`), until `timeoutMs` passes (resolves `false`), or until a
   * signal aborts (rejects with its reason). Consumes a permit instead of parking when one is kept.
   */
  wait(timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    if (this.permits > 0 && !signal?.aborted) {
      this.permits -= 1;
      return Promise.resolve(true);
    }
    return guarded<boolean>(
      (settle) => {
        this.parked.add(settle);
        return () => this.parked.delete(settle);
      },
      { timeoutMs, onTimeout: (settle) => settle.resolve(false), signals: [signal] },
    );
  }

  /**
   * Wakes up to `count` parked waiters, oldest first (`Infinity`: all). What is left of `count` is
   * kept as permits, never more than `maxPermits` in all.
   */
  wake(count: number, maxPermits: number): void {
    let left = count;
    for (const settle of this.parked) {
      if (left <= 0) break;
      left -= 1;
      settle.resolve(true);
    }
    if (left > 0) this.permits = Math.max(this.permits, Math.min(this.permits + left, maxPermits));
  }

  /** Rejects every parked waiter and every later `wait` with `error`. */
  close(error: Error): void {
    this.closedWith = error;
    for (const settle of [...this.parked]) settle.reject(error);
  }
}
