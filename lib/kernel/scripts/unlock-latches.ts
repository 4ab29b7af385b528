import type { RedisConnection } from '../../connection';

/**
 * Deletes the unlock latches of answered unlock calls, as Redisson does: by a `DEL` written behind
 * the unlock's reply, before the call resolves, and not waited for. A latch only serves re-sends
 * of a call whose reply was lost; once the reply is here it has no use, and a process that exits
 * without `shutdown()` leaves none behind for its TTL.
 *
 * The latches of the unlock replies read together (one read from the socket answers many calls
 * when many locks are released at once) go in one `DEL` per cluster slot: the deletion is queued as
 * a microtask behind the replies' own callbacks, which run first, and ahead of the callbacks that
 * resolve the calls. Under load that is one write for many unlocks instead of one each.
 */
export class UnlockLatches {
  /** Latches dropped and not deleted yet (queued, or their `DEL` unanswered). */
  private inFlight = 0;
  /** Latches dropped since the last deletion was queued. */
  private queued: string[] = [];
  /** Told once no deletion is in flight (see {@link settled}). */
  private idle: (() => void)[] = [];

  constructor(
    private readonly redis: RedisConnection,
    /** The cluster slot of a key (0 for every key on a standalone server). */
    private readonly slotOf: (key: string) => number,
    /** Told of a deletion that failed (the latch then expires by its TTL). */
    private readonly onError: (error: unknown, what: string) => void,
  ) {}

  /** Deletes `latch`, with the others dropped in the same run of microtasks. */
  drop(latch: string): void {
    this.inFlight += 1;
    if (this.queued.push(latch) === 1) queueMicrotask(this.deleteQueued);
  }

  /** Resolves once every latch dropped so far is deleted (or its deletion failed). */
  settled(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private readonly deleteQueued = (): void => {
    const latches = this.queued;
    this.queued = [];
    for (const group of bySlot(latches, this.slotOf)) {
      this.redis.del(...group).then(
        () => this.deleted(group.length),
        (error: unknown) => {
          this.deleted(group.length);
          this.onError(error, `deleting the unlock latches ${group.join(', ')} failed; they expire by their TTL`);
        },
      );
    }
  };

  private deleted(count: number): void {
    this.inFlight -= count;
    if (this.inFlight > 0 || this.idle.length === 0) return;
    const idle = this.idle;
    this.idle = [];
    for (const resolve of idle) resolve();
  }
}

/** `keys` grouped by slot (one group when they share one, as on a standalone server). */
function bySlot(keys: string[], slotOf: (key: string) => number): Iterable<string[]> {
  if (keys.length === 1) return [keys];
  const groups = new Map<number, string[]>();
  for (const key of keys) {
    const slot = slotOf(key);
    const group = groups.get(slot);
    if (group) group.push(key);
    else groups.set(slot, [key]);
  }
  return groups.values();
}
