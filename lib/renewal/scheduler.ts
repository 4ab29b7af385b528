import { LockLostError } from '../errors';

/** Renews a batch of leases; resolves one flag per lease: still held (`true`) or not. */
export type RenewBatch = (names: readonly string[], owners: readonly string[], leaseTime: number) => Promise<boolean[]>;

/** Settings of a {@link RenewalScheduler}. */
export interface RenewalSettings {
  /** Lease in ms set by each watchdog renewal; renewals run every third of it. */
  watchdogTimeout: number;
  /** Most leases per script call. */
  batchSize: number;
  /**
   * Leases with different groups never share a script call: the cluster slot of the lock's key in
   * Redis Cluster (one script cannot span slots); a constant elsewhere.
   */
  groupOf(name: string): number;
  /** Runs one batch. */
  renew: RenewBatch;
  /** Told of every lease found lost, after its listeners. */
  onLost(error: LockLostError): void;
  /** Monotonic clock in ms. */
  now?: () => number;
}

/** The lease an acquisition (or a partial release) set. */
export interface LeaseTerm {
  /** When the command that set the lease was sent (monotonic ms). */
  sentAt: number;
  /** The lease it set, in ms. */
  leaseTime: number;
  /** Whether the watchdog keeps renewing it. */
  renew: boolean;
}

/** Called once when the lease it watches is lost. */
export type LossListener = (error: LockLostError) => void;

/**
 * One owner's holds on one lock as this client tracks them, from the first acquisition sent until
 * the last hold is released and no acquisition is in flight. Acquisitions and handles keep a
 * reference, so a cycle looks it up once to acquire, and to release only without a handle.
 */
export class TrackedLease implements LeaseTerm {
  /** Acquisitions counted and not yet released; 0 while only acquisitions in flight keep it tracked. */
  holds = 0;
  /** Acquisitions sent and not yet answered. */
  inFlight = 0;
  sentAt = 0;
  leaseTime = 0;
  renew = false;
  /** @internal Told when the lease is lost; made on first use. */
  listeners: Set<LossListener> | undefined;

  constructor(
    /** @internal The scheduler's key for it. */
    readonly key: string,
    readonly name: string,
    readonly owner: string,
  ) {}

  /**
   * Holds the owner may have when the latest acquisition sent lands: the counted ones plus those
   * sent before it. Read right after `beginAcquire`.
   */
  get believedHolds(): number {
    return this.holds + this.inFlight - 1;
  }

  /** Calls `listener` if the holds counted now are lost. */
  watch(listener: LossListener): void {
    (this.listeners ??= new Set()).add(listener);
  }

  /** Detaches a listener given to {@link watch}. */
  unwatch(listener: LossListener): void {
    this.listeners?.delete(listener);
  }
}

/**
 * Tracks every lease this client holds. One timer renews the watchdog leases in batches every third
 * of `watchdogTimeout`. A lease is lost when renewal finds its owner gone, when an explicit lease
 * ends before its release, or when no renewal has succeeded for a whole lease (Redis unreachable,
 * event loop stalled); its listeners and `onLost` are then told.
 */
export class RenewalScheduler {
  private readonly leases = new Map<string, TrackedLease>();
  /** Leases with at least one hold. */
  private held = 0;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = 0;
  private renewing = false;
  private closed = false;
  private readonly now: () => number;
  private readonly period: number;

  constructor(private readonly settings: RenewalSettings) {
    this.now = settings.now ?? (() => performance.now());
    this.period = settings.watchdogTimeout / 3;
  }

  /** Number of leases held. */
  get size(): number {
    return this.held;
  }

  /**
   * Marks an acquisition by `owner` of `name` as sent and returns the owner's lease on it, to be
   * passed to {@link endAcquire} once the acquisition is answered or abandoned.
   */
  beginAcquire(name: string, owner: string): TrackedLease {
    const key = leaseKey(name, owner);
    let lease = this.leases.get(key);
    if (!lease) {
      lease = new TrackedLease(key, name, owner);
      this.leases.set(key, lease);
    }
    lease.inFlight += 1;
    return lease;
  }

  /** Marks an acquisition answered (or abandoned); with the `term` it set when it acquired. */
  endAcquire(lease: TrackedLease, term?: LeaseTerm): void {
    lease.inFlight -= 1;
    if (!term) return this.dropIfIdle(lease);
    if (lease.holds === 0) this.held += 1;
    lease.holds += 1;
    lease.sentAt = term.sentAt;
    lease.leaseTime = term.leaseTime;
    lease.renew = term.renew;
    this.schedule(this.dueAt(lease, 0));
  }

  /**
   * Counts one hold less and returns the lease, whose `holds` and `leaseTime` are what the holds
   * left have and keep; `undefined` when the owner holds none. `known` is the lease the hold was
   * counted in, if the caller kept it: while it has holds it is the owner's, found without a lookup.
   */
  unregister(name: string, owner: string, known?: TrackedLease): TrackedLease | undefined {
    const lease = known && known.holds > 0 ? known : this.leases.get(leaseKey(name, owner));
    if (!lease || lease.holds === 0) return undefined;
    lease.holds -= 1;
    if (lease.holds === 0) this.drop(lease);
    return lease;
  }

  /** Records a lease set again by a partial release (renewal, if any, carries on). */
  extend(lease: TrackedLease, sentAt: number, leaseTime: number): void {
    if (lease.holds === 0 || lease.renew) return;
    lease.sentAt = sentAt;
    lease.leaseTime = leaseTime;
    this.schedule(this.dueAt(lease, 0));
  }

  /** Stops counting the holds of `lease`, whatever their number. */
  forget(lease: TrackedLease): void {
    if (lease.holds === 0) return;
    lease.holds = 0;
    this.drop(lease);
  }

  /** Stops tracking every lease on `name` and tells their listeners the lock is lost. */
  loseAll(name: string, reason: string): void {
    for (const lease of [...this.leases.values()]) {
      if (lease.name === name) this.lose(lease, reason);
    }
  }

  /**
   * Stops for good. Every lease still held is reported lost: nothing renews it or can release it
   * through this client any more, so its holder must not go on believing it holds the lock.
   */
  shutdown(): void {
    for (const lease of [...this.leases.values()]) this.lose(lease, 'the client was shut down');
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Makes sure the timer fires by `at` (monotonic ms); a timer due earlier is kept. */
  private schedule(at: number): void {
    if (this.closed) return;
    if (this.timer && this.timerAt <= at) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => this.onTimer(), Math.max(0, at - this.now()));
    this.timer.unref();
  }

  /** When `lease` next needs the timer: its renewal, or the end of its lease, whichever is first. */
  private dueAt(lease: LeaseTerm, earliestRenewal: number): number {
    const end = lease.sentAt + lease.leaseTime;
    return lease.renew ? Math.min(Math.max(lease.sentAt + this.period, earliestRenewal), end) : end;
  }

  /** Schedules the next timer; a renewal that failed is retried a period later, not at once. */
  private reschedule(): void {
    const earliestRenewal = this.now() + this.period;
    let next = Infinity;
    for (const lease of this.leases.values()) {
      if (lease.holds > 0) next = Math.min(next, this.dueAt(lease, earliestRenewal));
    }
    if (next < Infinity) this.schedule(next);
  }

  /**
   * Declares every lease past its end lost (even while a renewal of it is still in flight: a reply
   * that arrives later cannot make the holder's belief true in the meantime), then starts a
   * renewal round unless one is under way.
   */
  private onTimer(): void {
    this.timer = undefined;
    for (const lease of [...this.leases.values()]) {
      if (lease.holds === 0 || this.now() - lease.sentAt < lease.leaseTime) continue;
      this.lose(lease, lease.renew
        ? `no renewal of its ${lease.leaseTime} ms lease succeeded in time`
        : `its ${lease.leaseTime} ms lease ended before it was released`);
    }
    if (!this.renewing) void this.renewAll();
    this.reschedule();
  }

  /** One renewal round: every renewed lease, in batches that never mix groups. */
  private async renewAll(): Promise<void> {
    const groups = new Map<number, TrackedLease[]>();
    for (const lease of this.leases.values()) {
      if (lease.holds === 0 || !lease.renew) continue;
      const group = this.settings.groupOf(lease.name);
      const leases = groups.get(group);
      if (leases) leases.push(lease);
      else groups.set(group, [lease]);
    }
    if (groups.size === 0) return;
    this.renewing = true;
    try {
      for (const leases of groups.values()) {
        for (let i = 0; i < leases.length && !this.closed; i += this.settings.batchSize) {
          await this.renewBatch(leases.slice(i, i + this.settings.batchSize));
        }
      }
    } finally {
      this.renewing = false;
      this.reschedule();
    }
  }

  private async renewBatch(batch: TrackedLease[]): Promise<void> {
    const sentAt = this.now();
    const leaseTime = this.settings.watchdogTimeout;
    let renewed: boolean[];
    try {
      renewed = await this.settings.renew(batch.map((l) => l.name), batch.map((l) => l.owner), leaseTime);
    } catch {
      return; // Transient: the next round retries; a lease past its end is declared lost by the timer.
    }
    batch.forEach((lease, i) => {
      if (lease.holds === 0 || !lease.renew) return; // released or lost meanwhile
      if (!renewed[i]) return this.lose(lease, 'renewal found it no longer held by its owner');
      lease.sentAt = sentAt;
      lease.leaseTime = leaseTime;
    });
  }

  /** The last hold of `lease` is gone: it stays tracked only while acquisitions are in flight. */
  private drop(lease: TrackedLease): void {
    lease.listeners = undefined;
    this.held -= 1;
    this.dropIfIdle(lease);
    if (this.held > 0 || !this.timer) return;
    clearTimeout(this.timer); // the timer goes with the last hold
    this.timer = undefined;
  }

  private dropIfIdle(lease: TrackedLease): void {
    if (lease.holds === 0 && lease.inFlight === 0) this.leases.delete(lease.key);
  }

  private lose(lease: TrackedLease, reason: string): void {
    if (lease.holds === 0) return;
    const listeners = lease.listeners;
    lease.holds = 0;
    this.drop(lease);
    const error = new LockLostError(`Lock '${lease.name}' was lost: ${reason}`, lease.name, lease.owner);
    if (listeners) for (const listener of listeners) listener(error);
    this.settings.onLost(error);
  }
}

function leaseKey(name: string, owner: string): string {
  return `${owner}\u0000${name}`;
}
