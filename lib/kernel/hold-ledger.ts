import { Lease, holdName, type LeaseKind, type LeaseTerm } from './leases/lease';
import type { LeaseTracker } from './leases/tracker';

/**
 * One owner's holds on one lock as this client counts them, from the first acquisition sent until
 * the last hold is released and no acquisition is in flight. It is also the lease the tracker renews
 * while holds remain. Acquisitions and handles keep a reference, so a cycle looks it up once to
 * acquire, and to release only without a handle.
 */
export class HeldLock extends Lease {
  /** Acquisitions counted and not yet released; 0 while only acquisitions in flight keep it. */
  holds = 0;
  /** Acquisitions sent and not yet answered. */
  inFlight = 0;
  /** When the first of the holds counted now was acquired (monotonic ms). */
  heldSince = 0;
  /**
   * Whether an acquisition outside any owner scope took it, under an owner id of its own: a bare
   * `unlock()` finds that owner here by the lock's name.
   */
  unscoped = false;
  /** @internal The next record under the same hold name (another owner's): the ledger's chain. */
  nextOwner: HeldLock | undefined;

  constructor(
    private readonly ledger: HoldLedger,
    /** The name its holds are counted under (see {@link holdName}): the ledger's key for it. */
    readonly key: string,
    /** The owner's thread id. */
    readonly threadId: number,
    kind: LeaseKind,
    name: string,
    owner: string,
    kindName: string,
    part: string | undefined,
  ) {
    super(kind, name, owner, kindName, part);
  }

  /**
   * Holds the owner may have when the latest acquisition sent lands: the counted ones plus those
   * sent before it. Read right after `beginAcquire`. The acquire scripts take it to tell a re-sent
   * acquisition (already counted) from a new one.
   */
  get believedHolds(): number {
    return this.holds + this.inFlight - 1;
  }

  override onLost(): void {
    this.holds = 0;
    this.ledger.dropIfIdle(this);
  }
}

/**
 * The hold ledger of one lock kind on one client: what each owner holds and has in flight. Records
 * are kept by hold name, the owners of one name chained (one, mostly), so a cycle builds no key of
 * its own. Held records are leases in the client's {@link LeaseTracker}.
 */
export class HoldLedger {
  /** The newest record of each hold name, the head of its chain. */
  private readonly records = new Map<string, HeldLock>();

  constructor(
    private readonly tracker: LeaseTracker,
    private readonly kind: LeaseKind,
  ) {}

  /**
   * Marks an acquisition by `owner` (thread `threadId`) of `name` (or of its `part`) as sent and
   * returns the owner's record, to be passed to {@link endAcquire} once the acquisition is answered
   * or abandoned. A new record is of the kind `kindName` (locks of several kinds share a ledger: the
   * first to count a hold names it).
   */
  beginAcquire(name: string, owner: string, threadId: number, kindName: string, part?: string): HeldLock {
    let record = this.find(name, owner, part);
    if (!record) {
      record = new HeldLock(this, holdName(name, part), threadId, this.kind, name, owner, kindName, part);
      this.link(record);
    }
    record.inFlight += 1;
    return record;
  }

  /** Marks an acquisition answered (or abandoned); with the `term` it set when it acquired. */
  endAcquire(record: HeldLock, term?: LeaseTerm): void {
    record.inFlight -= 1;
    if (!term) return this.dropIfIdle(record);
    if (record.holds === 0) record.heldSince = performance.now();
    record.holds += 1;
    this.tracker.track(record, term);
  }

  /**
   * Counts one hold less and returns the record, whose `holds` and `leaseTime` are what the holds
   * left have and keep; `undefined` when the owner holds none. `known` is the record the hold was
   * counted in, if the caller kept it: while it has holds it is the owner's, found without a lookup.
   */
  release(name: string, owner: string, known?: HeldLock, part?: string): HeldLock | undefined {
    const record = known && known.holds > 0 ? known : this.find(name, owner, part);
    if (!record || record.holds === 0) return undefined;
    record.holds -= 1;
    if (record.holds === 0) this.untrack(record);
    return record;
  }

  /** The owner's record, if it holds `name` (or its `part`) or has an acquisition of it in flight. */
  find(name: string, owner: string, part?: string): HeldLock | undefined {
    let record = this.records.get(holdName(name, part));
    while (record && record.owner !== owner) record = record.nextOwner;
    return record;
  }

  /** The thread id of the newest unscoped holder of `key` (a {@link holdName}), if one holds it. */
  unscopedHolder(key: string): number | undefined {
    for (let record = this.records.get(key); record; record = record.nextOwner) {
      if (record.unscoped && record.holds > 0) return record.threadId;
    }
    return undefined;
  }

  /** Records a lease set again by a partial release (renewal, if any, carries on). */
  extend(record: HeldLock, sentAt: number, leaseTime: number): void {
    if (record.holds > 0) this.tracker.extend(record, sentAt, leaseTime);
  }

  /** Stops counting the holds of `record`, whatever their number (Redis says there are none). */
  forget(record: HeldLock): void {
    if (record.holds === 0) return;
    record.holds = 0;
    this.untrack(record);
  }

  /**
   * Counts again a hold whose release may not have reached Redis. Its lease is not renewed any
   * more: unless a later release gets through, the tracker declares it lost (its handles' signals
   * abort) once its term ends.
   */
  unreleased(record: HeldLock): void {
    const current = this.find(record.name, record.owner, record.part);
    if (current !== undefined && current !== record) return; // the owner acquired it anew meanwhile
    if (current === undefined) this.link(record);
    record.holds += 1;
    if (record.holds === 1) this.tracker.track(record, { sentAt: record.sentAt, leaseTime: record.leaseTime, renew: false });
  }

  /** Declares every owner's holds on `name` (on its `part` only, if given) lost. */
  loseAll(name: string, reason: string, part?: string): void {
    const lost: HeldLock[] = [];
    for (const head of this.records.values()) {
      for (let record: HeldLock | undefined = head; record; record = record.nextOwner) {
        if (record.name === name && (part === undefined || record.part === part)) lost.push(record);
      }
    }
    for (const record of lost) this.tracker.lose(record, reason);
  }

  /** @internal A record with no hold and nothing in flight leaves the ledger. */
  dropIfIdle(record: HeldLock): void {
    if (record.holds === 0 && record.inFlight === 0) this.unlink(record);
  }

  private untrack(record: HeldLock): void {
    this.tracker.untrack(record);
    this.dropIfIdle(record);
  }

  /** Puts `record` at the head of its name's chain. */
  private link(record: HeldLock): void {
    record.nextOwner = this.records.get(record.key);
    this.records.set(record.key, record);
  }

  /** Takes `record` out of its name's chain, if it is in it. */
  private unlink(record: HeldLock): void {
    const head = this.records.get(record.key);
    if (head === record) {
      if (record.nextOwner) this.records.set(record.key, record.nextOwner);
      else this.records.delete(record.key);
    } else {
      let before = head;
      while (before && before.nextOwner !== record) before = before.nextOwner;
      if (!before) return;
      before.nextOwner = record.nextOwner;
    }
    record.nextOwner = undefined;
  }
}
