import type { LockLostError } from '../../errors';
import type { Linked } from '../linked-set';

/**
 * What kind of thing a lease keeps alive, and how to renew a batch of them. A primitive supplies
 * one per client; the tracker knows nothing else about it.
 */
export interface LeaseKind {
  /** What is lost, in error messages (e.g. `Permit`). */
  readonly noun: string;
  /**
   * Extends every lease of the batch that its owner still holds, to `leaseTime` ms; resolves one
   * flag per lease, in order (`false`: no longer held, so lost). Leases of one batch share a group.
   */
  renew(batch: readonly Lease[], leaseTime: number): Promise<boolean[]>;
}

/** The term an acquisition (or a partial release) set. */
export interface LeaseTerm {
  /** When the command that set the lease was sent (monotonic ms). */
  sentAt: number;
  /** The lease it set, in ms. */
  leaseTime: number;
  /** Whether the tracker keeps renewing it. */
  renew: boolean;
}

/**
 * The name an owner's hold of `part` of `name` is counted and remembered under: `name` itself for a
 * hold of the whole name.
 */
export function holdName(name: string, part: string | undefined): string {
  return part === undefined ? name : `${name}\u0000${part}`;
}

/** Called once when the lease it watches is lost. */
export type LossListener = (error: LockLostError) => void;

/**
 * One thing held on Redis with a time-to-live: a name, an owner and the term last set. Tracked by a
 * {@link LeaseTracker} from the moment it is held until it is released or lost.
 */
export class Lease implements LeaseTerm, Linked<Lease> {
  sentAt = 0;
  leaseTime = 0;
  renew = false;
  /** @internal Whether a tracker tracks it now. */
  tracked = false;
  /** @internal The tracker's set of leases (a `LinkedSet`). */
  prevLinked: Lease | undefined;
  /** @internal The tracker's set of leases (a `LinkedSet`). */
  nextLinked: Lease | undefined;
  /** @internal Told when the lease is lost: one listener as it is, more in a set (one per hold is usual). */
  listeners: LossListener | Set<LossListener> | undefined;

  constructor(
    /** How it is renewed. */
    readonly kind: LeaseKind,
    /** The key (or object name) it keeps alive. */
    readonly name: string,
    /** Who holds it: an owner token, or a permit id. */
    readonly owner: string,
    /** The name of the kind that holds it (e.g. `'fair-lock'`), for the `holdLost` event. */
    readonly kindName: string,
    /** The part of `name` it holds, when holds of one name may hold different parts; absent: all of it. */
    readonly part?: string,
  ) {}

  /** Calls `listener` if this lease is lost while tracked. */
  watch(listener: LossListener): void {
    const { listeners } = this;
    if (listeners === undefined) this.listeners = listener;
    else if (listeners instanceof Set) listeners.add(listener);
    else if (listeners !== listener) this.listeners = new Set([listeners, listener]);
  }

  /** Detaches a listener given to {@link watch}. */
  unwatch(listener: LossListener): void {
    const { listeners } = this;
    if (listeners === listener) this.listeners = undefined;
    else if (listeners instanceof Set) listeners.delete(listener);
  }

  /** @internal Told by the tracker, before the listeners, that it stopped tracking a lost lease. */
  onLost(): void {}
}

/** Tells `listeners` (a lease's, see {@link Lease.listeners}) that it was lost with `error`. */
export function tellLost(listeners: Lease['listeners'], error: LockLostError): void {
  if (typeof listeners === 'function') listeners(error);
  else if (listeners) for (const listener of listeners) listener(error);
}
