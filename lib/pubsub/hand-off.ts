/**
 * A release passed straight to a local waiter. As this client sends a release, its oldest local
 * waiter is woken at once, so that waiter's attempt follows the release on the same connection and
 * runs the moment the lock is free: a round trip sooner than waking on the reply or the message.
 *
 * The release's message still comes to the subscriber. Once both outcomes are known, it is passed
 * over if the release freed the lock and the waiter took it (no other local waiter could use it);
 * otherwise it wakes waiters as any message does.
 */
export class HandOff {
  private released: boolean | undefined;
  private acquired: boolean | undefined;

  /** `settle(consumed)` runs once, when both outcomes are known. */
  constructor(private readonly settle: (consumed: boolean) => void) {}

  /** The release's reply came (or failed): whether it freed the lock, publishing its message. */
  unlocked(released: boolean): void {
    if (this.released !== undefined) return;
    this.released = released;
    this.check();
  }

  /** The woken waiter's attempt settled: whether it took the lock. */
  attempted(acquired: boolean): void {
    if (this.acquired !== undefined) return;
    this.acquired = acquired;
    this.check();
  }

  private check(): void {
    if (this.released === undefined || this.acquired === undefined) return;
    this.settle(this.released && this.acquired);
  }
}
