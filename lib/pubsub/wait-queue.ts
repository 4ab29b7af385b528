import { Guarded } from '../util/guarded';

const notWoken = (guarded: Guarded<boolean>): void => guarded.resolve(false);

/**
 * Local FIFO of waiters on one channel. A wake-up that finds fewer parked waiters than it may wake
 * is kept as a permit (up to a cap), so a waiter that parks just after a message still retries at once.
 */
export class WaitQueue {
  private readonly parked = new Set<Guarded<boolean>>();
  private readonly unpark = (guarded: Guarded<boolean>): void => {
    this.parked.delete(guarded);
  };
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
    const parked = new Guarded<boolean>(timeoutMs, notWoken, signal);
    if (!parked.settled) {
      parked.onSettled = this.unpark;
      this.parked.add(parked);
    }
    return parked.promise;
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
