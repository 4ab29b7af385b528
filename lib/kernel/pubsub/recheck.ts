import type { Timed, TimerQueue } from '../timer-queue';
import type { AttemptReport, Waiter } from './wait-queue';

/**
 * The TTL re-check of one channel's parked waiters. What they wait for may end without a message
 * (a holder's lease runs out, a permit expires), so a refused attempt reads how long that may last
 * at most, and someone must check again then. The channel keeps the latest reading only (Redis
 * answers the attempts on a channel in order, so the latest is the truth), and when it runs out
 * wakes its oldest parked waiter alone. A waiter that acquires passes the re-check on to the next,
 * whose attempt reads the new holder's time (or acquires too, for what many may hold). One attempt
 * per channel per expiry, however many wait on it.
 */
export class TtlRecheck implements Timed, AttemptReport {
  /** @internal The timer queue's (see {@link Timed}). */
  dueAt = 0;
  /** @internal The timer queue's (see {@link Timed}). */
  queueIndex = -1;

  constructor(
    private readonly waiters: { shift(): Waiter | undefined },
    private readonly timers: TimerQueue,
  ) {}

  /** A refused attempt read `ttl` ms left (negative: no expiry, nothing to re-check). */
  read(ttl: number): void {
    if (ttl >= 0) this.timers.schedule(this, ttl);
    else this.timers.cancel(this);
  }

  /** Nobody waits on the channel any more. */
  stop(): void {
    this.timers.cancel(this);
  }

  /** @internal The latest reading ran out. */
  timeUp(): void {
    this.waiters.shift()?.recheck(this);
  }

  /** @internal The re-checking waiter's attempt settled; one that acquired passes the re-check on. */
  attempted(acquired: boolean): void {
    if (acquired) this.timeUp();
  }
}
