import type { ResolvedOptions } from '../options';
import type { BackOff } from './acquisition';
import type { ClientContext, HoldKind } from './context';
import type { WakePolicy } from './pubsub/wake';

/** One lock a kind's verb acts on: its name and the services of the client that made it. */
export interface LockTarget {
  readonly ctx: ClientContext;
  /** The lock's name: the key of its hash. */
  readonly name: string;
}

/** One attempt's inputs, as a lock kind's acquire script needs them. */
export interface AttemptInput {
  /** Owner token of the acquisition. */
  readonly owner: string;
  readonly threadId: number;
  /** Lease the attempt sets: the explicit one, or `lockWatchdogTimeout`. */
  readonly leaseTime: number;
  /** Holds the owner may have when this attempt lands (see `HeldLock.believedHolds`). */
  readonly believedHolds: number;
  /** Longest wait of the call in ms; `undefined`: as long as it takes. */
  readonly waitTime: number | undefined;
}

/**
 * What one attempt found: `null` when acquired, else the holder's TTL in ms (-1: none). A kind whose
 * acquire script reports more on success (the fenced lock's token) resolves an {@link Acquired}.
 */
export type AttemptResult = number | null | Acquired;

/** A successful attempt that reports what the acquisition was given. */
export interface Acquired {
  /** The fencing token this acquisition drew (fenced lock). */
  readonly fencingToken: number;
}

/**
 * What a release script found: the owner's last hold went (`released`), one of several went
 * (`decremented`), or the owner held none (`not-held`).
 */
export type ReleaseResult = 'released' | 'decremented' | 'not-held';

/** What a force release did: whether the lock existed, and whose holds it took with it. */
export interface ForceReleased {
  readonly existed: boolean;
  /** Kinds whose holds of this name this client counts as lost now. */
  readonly lost: readonly HoldKind[];
}

/**
 * A kind of lock as data plus verbs: the kernel's {@link BaseLock} drives any such record through
 * one wait loop, one hold ledger and one release path. A record is shared by every lock of its kind
 * (a kind with settings, such as the spin lock's back-off, makes one per setting); each verb gets
 * the lock it acts on.
 */
export interface LockKind {
  /** The kind's name in events and the registry, e.g. `'fair-lock'`. */
  readonly kind: string;
  /** How holds of this kind are renewed; kinds counting the same hash's holds share one (one ledger). */
  readonly holds: HoldKind;
  /**
   * The part of the name this record's locks hold, when locks of one name may hold different parts
   * of it (a subset of its hash's fields, written as one string): holds are counted, renewed,
   * remembered per owner and declared lost per name and part; each renewed lease carries it.
   * Absent: the whole name.
   */
  readonly part?: string;
  /** The owner token of `threadId`; absent: `<clientId>:<threadId>` (a write lock adds `:write`). */
  owner?(lock: LockTarget, threadId: number): string;
  /** Runs the acquire script once. */
  attempt(lock: LockTarget, input: AttemptInput): Promise<AttemptResult>;
  /**
   * Brings the owner's holds back down to `holdsBefore` after acquisitions whose outcome is unknown
   * (failed in transit, or landed after their caller gave up).
   */
  trim(lock: LockTarget, owner: string, holdsBefore: number): Promise<unknown>;
  /** Runs the release script once; holds left keep `leaseTime`. */
  release(lock: LockTarget, owner: string, leaseTime: number): Promise<ReleaseResult>;
  /** Deletes the lock whoever holds it, waking a waiter. */
  forceRelease(lock: LockTarget): Promise<ForceReleased>;
  /** Whether anyone holds the lock (in this kind's mode). */
  isLocked(lock: LockTarget): Promise<boolean>;
  /** Whether `owner` holds the lock. */
  isHeldBy(lock: LockTarget, owner: string): Promise<boolean>;
  /** `owner`'s hold count. */
  holdCount(lock: LockTarget, owner: string): Promise<number>;
  /** Time left on the lease in ms: -2 when free, -1 when held without expiry. */
  remainTimeToLive(lock: LockTarget): Promise<number>;
  /** Owner tokens waiting in the lock's queue in Redis, first first; absent: the kind keeps no queue there. */
  queued?(lock: LockTarget): Promise<string[]>;
  /** The channel a release is announced on for `threadId`'s waits; `undefined`: re-check on `backOff`. */
  channel(lock: LockTarget, threadId: number): string | undefined;
  /** How messages on that channel wake local waiters. */
  readonly wake: WakePolicy;
  /** Delays between re-checks without a channel or subscription; absent: the kernel's fallback. */
  readonly backOff?: BackOff;
  /**
   * Told once when an acquisition of `threadId` ends without acquiring (`waitTime`: the call's;
   * `0`: a single attempt): undoes what waiting left in Redis (the fair lock's queue entry). A time-out
   * resolves after it; a failure is logged.
   */
  gaveUp?(lock: LockTarget, threadId: number, waitTime: number | undefined): Promise<unknown> | undefined;
  /**
   * Whether a release that frees the lock hands it straight to this client's next waiter.
   * @default false
   */
  readonly handsOffLocally?: boolean;
  /**
   * Whether a newcomer waits behind this client's waiters on the channel before its first attempt.
   * A shared lock (read lock) says no: a newcomer may get in at once although the waiters cannot.
   * @default true
   */
  readonly queuesBehindLocalWaiters?: boolean;
  /**
   * Whether a release that leaves holds sets their lease to the latest acquisition's (the unlock
   * script's PEXPIRE). A read lock says no: each read hold keeps its own term.
   * @default true
   */
  readonly partialReleaseResetsLease?: boolean;
  /**
   * How long in ms a channel stays subscribed after the wait of an owner given by its caller, who
   * may come back right after its release; a fresh owner's channel goes at once.
   * @default 0
   */
  channelLinger?(options: ResolvedOptions): number;
}
