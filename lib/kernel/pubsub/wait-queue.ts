/** Told whether the attempt a wake-up started succeeded; see {@link Waiter.wake}. */
export interface AttemptReport {
  attempted(succeeded: boolean): void;
}

/** A waiter parked on a channel; it keeps its own timer for its wait time, if any. */
export interface Waiter {
  /**
   * Woken by a message (or a turn passed on); already out of the queue. With `report`, the one who
   * woke it wants to know whether the attempt this wake-up starts succeeds.
   */
  wake(report?: AttemptReport): void;
  /**
   * Woken to check again without a message: what its channel waits for may have ended by itself (a
   * lease ran out). Already out of the queue; `report` wants the attempt's outcome.
   */
  recheck(report: AttemptReport): void;
  /** The queue closed (the client is shutting down); already out of the queue. */
  close(error: Error): void;
  /**
   * Offered `gift`, something this client is releasing, in place of a wake-up: returns whether it
   * claims it, which wakes it at once (its attempt goes out with the release). Still in the queue
   * while asked.
   */
  claim?(gift: unknown): boolean;
  /** How many callers it waits for, as diagnostics count them (a wait shared by several). @default 1 */
  readonly callers?: number;
}

/**
 * Local FIFO of waiters on one channel. A wake-up that finds fewer parked waiters than it may wake
 * is kept as a permit (up to a cap), so a waiter that parks just after a message still retries at once.
 */
export class WaitQueue {
  private readonly parked = new Set<Waiter>();
  private permits = 0;
  private closedWith: Error | undefined;

  /** Number of parked waiters. */
  get size(): number {
    return this.parked.size;
  }

  /** Number of callers the parked waiters wait for (see {@link Waiter.callers}). */
  get callers(): number {
    let callers = 0;
    for (const waiter of this.parked) callers += waiter.callers ?? 1;
    return callers;
  }

  /**
   * Parks `waiter` until a wake-up; returns `false`, parking nothing, when it takes a kept permit
   * instead (the caller goes on at once). Throws the close error once the queue is closed.
   */
  park(waiter: Waiter): boolean {
    if (this.closedWith) throw this.closedWith;
    if (this.permits > 0) {
      this.permits -= 1;
      return false;
    }
    this.parked.add(waiter);
    return true;
  }

  /** Takes the oldest parked waiter out without waking it. */
  shift(): Waiter | undefined {
    for (const waiter of this.parked) {
      this.parked.delete(waiter);
      return waiter;
    }
    return undefined;
  }

  /**
   * Offers `gift` to the oldest parked waiter, which leaves the queue if it claims it; returns
   * whether it did. A younger waiter is never asked: nobody is served past the oldest.
   */
  offer(gift: unknown): boolean {
    for (const waiter of this.parked) {
      if (!waiter.claim?.(gift)) return false;
      this.parked.delete(waiter);
      return true;
    }
    return false;
  }

  /** Takes `waiter` out without waking it (its time ran out, or it gave up). */
  leave(waiter: Waiter): void {
    this.parked.delete(waiter);
  }

  /**
   * Wakes up to `count` parked waiters, oldest first (`Infinity`: all). What is left of `count` is
   * kept as permits, never more than `maxPermits` in all.
   */
  wake(count: number, maxPermits: number): void {
    let left = count;
    for (const waiter of this.parked) {
      if (left <= 0) break;
      left -= 1;
      this.parked.delete(waiter);
      waiter.wake();
    }
    if (left > 0) this.permits = Math.max(this.permits, Math.min(this.permits + left, maxPermits));
  }

  /** Drops the wake-ups kept as permits. */
  clearPermits(): void {
    this.permits = 0;
  }

  /** Closes every parked waiter with `error`; later `park` calls throw it. */
  close(error: Error): void {
    this.closedWith = error;
    const parked = [...this.parked];
    this.parked.clear();
    for (const waiter of parked) waiter.close(error);
  }
}
