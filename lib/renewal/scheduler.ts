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

interface Lease extends LeaseTerm {
  readonly name: string;
  readonly owner: string;
  /** Acquisitions not yet released. */
  holds: number;
  readonly listeners: Set<(error: LockLostError) => void>;
}

/**
 * Tracks every lease this client holds. One timer renews the watchdog leases in batches every third
 * of `watchdogTimeout`. A lease is lost when renewal finds its owner gone, when an explicit lease
 * ends before its release, or when no renewal has succeeded for a whole lease (Redis unreachable,
 * event loop stalled); its listeners and `onLost` are then told.
 */
export class RenewalScheduler {
  private readonly leases = new Map<string, Lease>();
  /** Acquisitions sent and not yet answered, per lease key. */
  private readonly inFlight = new Map<string, number>();
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

  /** Number of leases tracked. */
  get size(): number {
    return this.leases.size;
  }

  /** Counts one more hold of `owner` on `name`, whose lease is now `term`. */
  register(name: string, owner: string, term: LeaseTerm): void {
    const key = leaseKey(name, owner);
    const lease = this.leases.get(key);
    if (lease) {
      lease.holds += 1;
      Object.assign(lease, term);
    } else {
      this.leases.set(key, { name, owner, holds: 1, listeners: new Set(), ...term });
    }
    this.schedule(this.dueAt(term, 0));
  }

  /**
   * Marks an acquisition by `owner` of `name` as sent; returns the holds the owner may have when it
   * lands (tracked holds plus the acquisitions sent before it). Pair with {@link endAcquire}.
   */
  beginAcquire(name: string, owner: string): number {
    const key = leaseKey(name, owner);
    const pending = this.inFlight.get(key) ?? 0;
    this.inFlight.set(key, pending + 1);
    return (this.leases.get(key)?.holds ?? 0) + pending;
  }

  /** Marks an acquisition begun by {@link beginAcquire} as answered (or abandoned). */
  endAcquire(name: string, owner: string): void {
    const key = leaseKey(name, owner);
    const pending = (this.inFlight.get(key) ?? 1) - 1;
    if (pending > 0) this.inFlight.set(key, pending);
    else this.inFlight.delete(key);
  }

  /**
   * Counts one hold less (tracking stops with the last) and returns the holds left and the lease
   * last set, which they keep; `undefined` when the lease is not tracked.
   */
  unregister(name: string, owner: string): { readonly holds: number; readonly leaseTime: number } | undefined {
    const key = leaseKey(name, owner);
    const lease = this.leases.get(key);
    if (lease && --lease.holds <= 0) this.delete(key);
    return lease;
  }

  /** Records a lease set again by a partial release (renewal, if any, carries on). */
  extend(name: string, owner: string, sentAt: number, leaseTime: number): void {
    const lease = this.leases.get(leaseKey(name, owner));
    if (!lease || lease.renew) return;
    Object.assign(lease, { sentAt, leaseTime });
    this.schedule(this.dueAt(lease, 0));
  }

  /** Stops tracking `owner`'s lease on `name` whatever its hold count. */
  forget(name: string, owner: string): void {
    this.delete(leaseKey(name, owner));
  }

  /** Stops tracking every lease on `name` and tells their listeners the lock is lost. */
  loseAll(name: string, reason: string): void {
    for (const lease of [...this.leases.values()]) {
      if (lease.name === name) this.lose(lease, reason);
    }
  }

  /**
   * Calls `listener` once if `owner`'s lease on `name` is lost; returns the function that detaches
   * it, or `undefined` when no such lease is tracked.
   */
  onLost(name: string, owner: string, listener: (error: LockLostError) => void): (() => void) | undefined {
    const lease = this.leases.get(leaseKey(name, owner));
    if (!lease) return undefined;
    lease.listeners.add(listener);
    return () => lease.listeners.delete(listener);
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
    this.inFlight.clear();
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
    for (const lease of this.leases.values()) next = Math.min(next, this.dueAt(lease, earliestRenewal));
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
      if (this.now() - lease.sentAt < lease.leaseTime) continue;
      this.lose(lease, lease.renew
        ? `no renewal of its ${lease.leaseTime} ms lease succeeded in time`
        : `its ${lease.leaseTime} ms lease ended before it was released`);
    }
    if (!this.renewing) void this.renewAll();
    this.reschedule();
  }

  /** One renewal round: every renewed lease, in batches that never mix groups. */
  private async renewAll(): Promise<void> {
    const groups = new Map<number, Lease[]>();
    for (const lease of this.leases.values()) {
      if (!lease.renew) continue;
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

  private async renewBatch(batch: Lease[]): Promise<void> {
    const sentAt = this.now();
    const leaseTime = this.settings.watchdogTimeout;
    let renewed: boolean[];
    try {
      renewed = await this.settings.renew(batch.map((l) => l.name), batch.map((l) => l.owner), leaseTime);
    } catch {
      return; // Transient: the next round retries; a lease past its end is declared lost by the timer.
    }
    batch.forEach((lease, i) => {
      if (this.leases.get(leaseKey(lease.name, lease.owner)) !== lease || !lease.renew) return; // changed meanwhile
      if (renewed[i]) Object.assign(lease, { sentAt, leaseTime });
      else this.lose(lease, 'renewal found it no longer held by its owner');
    });
  }

  /** Stops tracking a lease; the timer goes with the last one. */
  private delete(key: string): void {
    if (!this.leases.delete(key) || this.leases.size > 0 || !this.timer) return;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private lose(lease: Lease, reason: string): void {
    this.delete(leaseKey(lease.name, lease.owner));
    const error = new LockLostError(`Lock '${lease.name}' was lost: ${reason}`, lease.name, lease.owner);
    for (const listener of lease.listeners) listener(error);
    this.settings.onLost(error);
  }
}

function leaseKey(name: string, owner: string): string {
  return `${owner}\u0000${name}`;
}
