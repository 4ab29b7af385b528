import { LockLostError } from '../../errors';
import { LinkedSet, type Linked } from '../linked-set';
import { tellLost, type Lease, type LeaseKind, type LeaseTerm } from './lease';

/** Settings of a {@link LeaseTracker}. */
export interface LeaseTrackerSettings {
  /** Lease in ms set by each renewal; renewals run every third of it. */
  renewalLease: number;
  /** Most leases per renewal call. */
  batchSize: number;
  /** Most renewal calls of a round in flight at once. */
  callsInFlight: number;
  /**
   * Leases with different groups never share a renewal call: the cluster slot of the lease's name in
   * Redis Cluster (one script cannot span slots); a constant elsewhere.
   */
  groupOf(name: string): number;
  /** Told of every lease found lost, after its listeners. */
  onLost(error: LockLostError, lease: Lease): void;
  /** Told of a renewal call that failed (it is retried a period later). */
  onRenewalError(error: unknown): void;
  /** Monotonic clock in ms. */
  now?: () => number;
  /** Told as each renewal round starts, before its first call (the client's record is refreshed then). */
  onRound?: () => void;
}

/** Something due at `dueAt` (monotonic ms): `timeUp` is called once then, unless cancelled first. */
export interface Due extends Linked<Due> {
  readonly dueAt: number;
  timeUp(): void;
}

/**
 * Renewal calls a client keeps in flight during a round: a round takes a round trip per this many
 * batches, not per batch, while a server (or a Cluster node) never has more than this many queued
 * by the watchdog ahead of other commands.
 */
export const RENEWAL_CALLS_IN_FLIGHT = 8;

/**
 * Tracks every lease a client holds. One timer renews the renewed leases in batches (grouped by
 * kind and group, `callsInFlight` calls at a time) every third of `renewalLease`. A lease is lost
 * when renewal finds it no longer held, when an explicit term ends before its release, or when no
 * renewal has succeeded for a whole term (Redis unreachable, event loop stalled); its `onLost`,
 * listeners and `settings.onLost` are then told.
 */
export class LeaseTracker {
  private readonly leases = new LinkedSet<Lease>();
  /** Calls waiting for a reply that must come before a lease's end (see {@link until}). */
  private readonly deadlines = new LinkedSet<Due>();
  private timer: NodeJS.Timeout | undefined;
  private timerAt = 0;
  private renewing = false;
  private closed = false;
  private readonly now: () => number;
  private readonly period: number;

  constructor(private readonly settings: LeaseTrackerSettings) {
    this.now = settings.now ?? (() => performance.now());
    this.period = settings.renewalLease / 3;
  }

  /** Number of leases tracked. */
  get size(): number {
    return this.leases.size;
  }

  /** Starts tracking `lease` with `term`, or records a new term for one tracked already. */
  track(lease: Lease, term: LeaseTerm): void {
    if (!lease.tracked) {
      lease.tracked = true;
      this.leases.add(lease);
    }
    lease.sentAt = term.sentAt;
    lease.leaseTime = term.leaseTime;
    lease.renew = term.renew;
    this.schedule(this.dueAt(lease, 0));
  }

  /** Records a term set again on a tracked lease that is not renewed (a partial release). */
  extend(lease: Lease, sentAt: number, leaseTime: number): void {
    if (!lease.tracked || lease.renew) return;
    lease.sentAt = sentAt;
    lease.leaseTime = leaseTime;
    this.schedule(this.dueAt(lease, 0));
  }

  /** Stops tracking `lease` (it was released); its listeners are dropped untold. */
  untrack(lease: Lease): void {
    if (!lease.tracked) return;
    lease.tracked = false;
    lease.listeners = undefined;
    this.leases.delete(lease);
    this.clearIfIdle();
  }

  /**
   * Arms `deadline` on the renewal timer: a reply that must come before a lease's end (an unlock)
   * shares the timer a held lease keeps armed anyway. See {@link cancel}.
   */
  arm(deadline: Due): void {
    this.deadlines.add(deadline);
    this.schedule(deadline.dueAt);
  }

  /** Cancels a deadline given to {@link arm}, due or not. */
  cancel(deadline: Due): void {
    this.deadlines.delete(deadline);
    this.clearIfIdle();
  }

  /** The timer goes with the last lease and the last deadline. */
  private clearIfIdle(): void {
    if (this.leases.size > 0 || this.deadlines.size > 0 || !this.timer) return;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Declares `lease` lost for `reason`, if tracked. */
  lose(lease: Lease, reason: string): void {
    if (!lease.tracked) return;
    const listeners = lease.listeners;
    this.untrack(lease);
    lease.onLost();
    const error = new LockLostError(`${lease.kind.noun} '${lease.name}' was lost: ${reason}`, lease.name, lease.owner);
    tellLost(listeners, error);
    this.settings.onLost(error, lease);
  }

  /** Declares every tracked lease that `matches` lost for `reason`. */
  loseWhere(matches: (lease: Lease) => boolean, reason: string): void {
    for (const lease of [...this.leases]) if (matches(lease)) this.lose(lease, reason);
  }

  /**
   * Stops for good. Every lease still tracked is reported lost: nothing renews it or can release it
   * through this client any more, so its holder must not go on believing it holds it.
   */
  shutdown(): void {
    this.loseWhere(() => true, 'the client was shut down');
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

  /** When `lease` next needs the timer: its renewal, or the end of its term, whichever is first. */
  private dueAt(lease: LeaseTerm, earliestRenewal: number): number {
    const end = lease.sentAt + lease.leaseTime;
    return lease.renew ? Math.min(Math.max(lease.sentAt + this.period, earliestRenewal), end) : end;
  }

  /** Schedules the next timer; a renewal that failed is retried a period later, not at once. */
  private reschedule(): void {
    const earliestRenewal = this.now() + this.period;
    let next = Infinity;
    for (const lease of this.leases) next = Math.min(next, this.dueAt(lease, earliestRenewal));
    for (const deadline of this.deadlines) next = Math.min(next, deadline.dueAt);
    if (next < Infinity) this.schedule(next);
  }

  /**
   * Declares every lease past its end lost (even while a renewal of it is still in flight: a reply
   * that arrives later cannot make the holder's belief true in the meantime), then starts a
   * renewal round unless one is under way.
   */
  private onTimer(): void {
    this.timer = undefined;
    const now = this.now();
    for (const deadline of [...this.deadlines]) {
      if (now < deadline.dueAt) continue;
      this.deadlines.delete(deadline);
      deadline.timeUp();
    }
    for (const lease of [...this.leases]) {
      if (now - lease.sentAt < lease.leaseTime) continue;
      this.lose(lease, lease.renew
        ? `no renewal of its ${lease.leaseTime} ms lease succeeded in time`
        : `its ${lease.leaseTime} ms lease ended before it was released`);
    }
    this.renewNow();
    this.reschedule();
  }

  /**
   * Starts a renewal round now, unless one is under way: called when the connection is ready again,
   * since a server restarted without persistence has lost every lease and its holders must be told
   * before the next period (a third of the lease) while others can take the locks already.
   */
  renewNow(): void {
    // Fire and forget: a renewal call's failure is handled per batch; anything else is reported too.
    if (!this.closed && !this.renewing) void this.renewAll().catch((error: unknown) => this.settings.onRenewalError(error));
  }

  /**
   * One renewal round: every renewed lease, in batches that never mix kinds or groups, sent in that
   * order with up to `callsInFlight` awaiting their replies. A call that fails is reported and the
   * round goes on.
   */
  private async renewAll(): Promise<void> {
    const groups = new Map<LeaseKind, Map<number, Lease[]>>();
    for (const lease of this.leases) {
      if (!lease.renew) continue;
      let byGroup = groups.get(lease.kind);
      if (!byGroup) groups.set(lease.kind, (byGroup = new Map<number, Lease[]>()));
      const group = this.settings.groupOf(lease.name);
      const leases = byGroup.get(group);
      if (leases) leases.push(lease);
      else byGroup.set(group, [lease]);
    }
    if (groups.size === 0) return;
    this.settings.onRound?.();
    this.renewing = true;
    // Each sender takes the next batch once its call has settled; none takes one after shutdown.
    const batches = this.batchesOf(groups);
    const send = async (): Promise<void> => {
      for (let next = batches.next(); !next.done && !this.closed; next = batches.next()) {
        await this.renewBatch(...next.value);
      }
    };
    try {
      await Promise.all(
        Array.from({ length: this.settings.callsInFlight }, () =>
          send().catch((error: unknown) => this.settings.onRenewalError(error)),
        ),
      );
    } finally {
      this.renewing = false;
      this.reschedule();
    }
  }

  /** The batches of a round, in order: kind by kind, group by group. */
  private *batchesOf(groups: Map<LeaseKind, Map<number, Lease[]>>): Generator<[LeaseKind, Lease[]]> {
    const size = this.settings.batchSize;
    for (const [kind, byGroup] of groups) {
      for (const leases of byGroup.values()) {
        for (let i = 0; i < leases.length; i += size) yield [kind, leases.slice(i, i + size)];
      }
    }
  }

  private async renewBatch(kind: LeaseKind, batch: Lease[]): Promise<void> {
    const sentAt = this.now();
    const leaseTime = this.settings.renewalLease;
    let renewed: boolean[];
    try {
      renewed = await kind.renew(batch, leaseTime);
    } catch (error) {
      // Transient: the next round retries; a lease past its end is declared lost by the timer.
      this.settings.onRenewalError(error);
      return;
    }
    batch.forEach((lease, i) => {
      if (!lease.tracked || !lease.renew) return; // released or lost meanwhile
      if (!renewed[i]) return this.lose(lease, 'renewal found it no longer held by its owner');
      lease.sentAt = sentAt;
      lease.leaseTime = leaseTime;
    });
  }
}
