import type { RedisConnection } from '../../connection';

/**
 * Deletes the unlock latches of answered unlock calls, as Redisson does: a `DEL` written right
 * behind the unlock's reply, before the call resolves, and not waited for. A latch only serves
 * re-sends of a call whose reply was lost; once the reply is here it has no use, and a process that
 * exits without `shutdown()` leaves none behind for its TTL.
 */
export class UnlockLatches {
  /** Deletions sent and not answered yet. */
  private inFlight = 0;
  /** Told once no deletion is in flight (see {@link settled}). */
  private idle: (() => void)[] = [];

  constructor(
    private readonly redis: RedisConnection,
    /** Told of a deletion that failed (the latch then expires by its TTL). */
    private readonly onError: (error: unknown, what: string) => void,
  ) {}

  /** Sends the `DEL` of `latch` now. */
  drop(latch: string): void {
    this.inFlight += 1;
    this.redis.del(latch).then(this.answered, (error: unknown) => {
      this.answered();
      this.onError(error, `deleting the unlock latch ${latch} failed; it expires by its TTL`);
    });
  }

  /** Resolves once every deletion sent so far has been answered. */
  settled(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private readonly answered = (): void => {
    this.inFlight -= 1;
    if (this.inFlight > 0 || this.idle.length === 0) return;
    const idle = this.idle;
    this.idle = [];
    for (const resolve of idle) resolve();
  };
}
