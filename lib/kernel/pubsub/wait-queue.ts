import { LinkedSet, type Linked } from '../linked-set';

/** Told whether the attempt a wake-up started succeeded; see {@link Waiter.wake}. */
export interface AttemptReport {
  attempted(succeeded: boolean): void;
}

/**
 * A waiter parked on a channel; it keeps its own timer for its wait time, if any. The queue links
 * it through its own fields (see {@link LinkedSet}): while parked, it is in no other such set.
 */
export interface Waiter extends Linked<Waiter> {
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
   * claims it. Still in the queue while asked; a claim takes it out and wakes it at once (its
   * attempt goes out with the release).
   */
  claim?(gift: unknown): boolean;
  /** How many callers it waits for, as diagnostics count them (a wait shared by several). @default 1 */
  readonly callers?: number;
}

/**
 * Local FIFO of waiters on one channel. A wake-up that finds fewer parked waiters than it may wake
 * is kept as a permit (up to a cap), so a waiter that parks just after a message still retries at once.
 * Waiters are taken out before they are called, one at a time from the front, so that what a
 * called waiter does to the queue meanwhile is seen.
 */
export class WaitQueue {
  private readonly parked = new LinkedSet<Waiter>();
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
    const waiter = this.parked.first;
    if (waiter) this.parked.delete(waiter);
    return waiter;
  }

  /**
   * Offers `gift` to the oldest parked waiter, which is woken if it claims it; returns whether it
   * did. A younger waiter is never asked: nobody is served past the oldest.
   */
  offer(gift: unknown): boolean {
    const waiter = this.parked.first;
    if (!waiter?.claim?.(gift)) return false;
    this.parked.delete(waiter);
    waiter.wake();
    return true;
  }

  /** Takes `waiter` out without waking it (its time ran out, or it gave up). */
  leave(waiter: Waiter): void {
    this.parked.delete(waiter);
  }

  /**
   * Wakes up to `count` parked waiters, oldest first (`Infinity`: all). What is left of `count` is
   * kept as permits, never more than `maxPermits` in all. Once closed, wakes and keeps nothing.
   */
  wake(count: number, maxPermits: number): void {
    if (this.closedWith) return;
    let left = count;
    for (; left > 0; left -= 1) {
      const waiter = this.shift();
      if (!waiter) break;
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
    for (let waiter = this.shift(); waiter; waiter = this.shift()) waiter.close(error);
  }
}
