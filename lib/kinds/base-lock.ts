import { InvalidArgumentError, LockAcquireTimeoutError, LockNotHeldError, RedisUnavailableError, RedissonError } from '../errors';
import { ownerToken } from '../keys';
import {
  checkThreadId,
  resolveCallOptions,
  type AcquireOptions,
  type CallOptions,
  type LockOptions,
  type OwnerOptions,
  type TryLockOptions,
} from '../options';
import type { WakePolicy } from '../kernel/pubsub/wake';
import { holdCount, isHeldBy, isLocked, newRequestId, remainTimeToLive, type UnlockResult } from './scripts/lock';
import { acquireWithWait, fallbackBackOff, replyWithin, type AttemptSource, type Deadline, type BackOff } from '../kernel/acquisition';
import type { ClientContext, HoldKind } from '../kernel/context';
import { LocalHandOff } from '../kernel/hand-off';
import { emitReleased } from '../kernel/hold-events';
import { Handle, type HandleLease } from '../kernel/handle';
import type { HeldLock, HoldLedger } from '../kernel/hold-ledger';

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
 * @internal What {@link BaseLock.tryAcquireMember} resolves when it did not acquire: the holder's
 * remaining TTL in ms as the last attempt saw it (-1: no expiry).
 */
export interface HeldElsewhere {
  readonly ttl: number;
}

/**
 * What every lock shares (Redisson's `RedissonBaseLock`): owner resolution, the hold ledger,
 * acquire / trim / conclude / give back, release with its latch, lost-lease wiring, and both
 * surfaces, Java-style (`lock`, `tryLock`, `unlock`) and handles (`acquire`, `tryAcquire`, `using`).
 * A lock kind supplies its scripts, its channel and wake policy, and the hooks it needs.
 *
 * The owner of a call is, in order: its `threadId` option, the current owner scope
 * (`redisson.run`, `lock.using`), else, to acquire, a fresh id; to release or query, the id of this
 * client's unscoped acquisition of the lock still held.
 *
 * @example
 * ```ts
 * async function exclusively<T>(lock: BaseLock, fn: () => Promise<T>): Promise<T> {
 *   return lock.using(fn, { waitTime: 10_000 }); // any lock kind: RLock, RFairLock, RWriteLock, ...
 * }
 * await exclusively(redisson.getFairLock('printer'), () => print(doc));
 * ```
 * @category Locks
 */
export abstract class BaseLock {
  /** @internal The client's ledger of this kind's holds. */
  readonly ledger: HoldLedger;
  /** @internal The kind's name in events (e.g. `'fair-lock'`). */
  abstract readonly kind: string;

  /** @internal Made by the client's factories. */
  protected constructor(
    /** @internal */
    protected readonly ctx: ClientContext,
    /** The lock's name: the key of its hash. */
    readonly name: string,
    kind: HoldKind,
  ) {
    this.ledger = ctx.ledger(kind);
  }

  /*
   * What a lock kind supplies.
   */

  /** @internal Runs the acquire script once. */
  protected abstract tryAcquireOnce(input: AttemptInput): Promise<AttemptResult>;

  /**
   * @internal Brings the owner's holds back down to `holdsBefore` after acquisitions whose outcome
   * is unknown (failed in transit, or landed after their caller gave up).
   */
  protected abstract undoAcquire(owner: string, holdsBefore: number): Promise<unknown>;

  /** @internal Runs the unlock script once; `requestId` names its unlock latch. */
  protected abstract releaseOnce(owner: string, leaseTime: number, requestId: string): Promise<UnlockResult>;

  /** @internal Runs the force-unlock script; resolves whether the lock existed. */
  protected abstract forceReleaseOnce(): Promise<boolean>;

  /** @internal Channel the release of this lock is announced on, for `threadId`'s waits. */
  protected abstract channelFor(threadId: number): string | undefined;

  /** @internal How messages on that channel wake local waiters. */
  protected abstract readonly wakePolicy: WakePolicy;

  /** @internal Delays between re-checks when there is no channel (or no subscription). */
  protected readonly backOff: BackOff = fallbackBackOff;

  /** @internal The owner token of `threadId` (a write lock adds `:write`). */
  protected ownerOf(threadId: number): string {
    return ownerToken(this.ctx.clientId, threadId);
  }

  /**
   * @internal Told once when an acquisition of `threadId` ends without acquiring, whichever way
   * (time-out, abort, error, shutdown); `waitTime` is the call's (`undefined`: no limit, `0`: a
   * single attempt). The place to undo what waiting left in Redis (the fair lock's queue entry).
   * A promise returned is awaited before a time-out resolves, so the caller sees Redis cleaned up;
   * an abort, an error or a shutdown rejects at once. A rejection is logged, never thrown.
   */
  protected acquisitionGaveUp(_threadId: number, _waitTime: number | undefined): Promise<unknown> | undefined {
    return undefined;
  }

  /** @internal Whether a release that frees the lock hands it straight to the next local waiter. */
  protected get handsOffLocally(): boolean {
    return false;
  }

  /**
   * @internal Whether a newcomer waits for its turn behind this client's waiters on the channel
   * before its first attempt (fairness among local waiters). A shared lock (read lock) says no: a
   * newcomer may get in at once although the local waiters cannot.
   */
  protected get queuesBehindLocalWaiters(): boolean {
    return true;
  }

  /**
   * @internal How long in ms a channel stays subscribed after a wait of an owner given by its
   * caller (a `threadId`, an owner scope), which may come back for the lock right after its
   * release. A fresh owner never comes back, so its channel goes at once.
   */
  protected get channelLinger(): number {
    return 0;
  }

  /**
   * @internal Whether a release that leaves holds sets the lease of the holds left to the lease of
   * the latest acquisition (RLock, write lock: the unlock script's PEXPIRE). A read lock says no:
   * each read hold keeps the term its own acquisition set.
   */
  protected get partialReleaseResetsLease(): boolean {
    return true;
  }

  /*
   * The Java-style surface.
   */

  /**
   * Waits as long as it takes for the lock. Without `leaseTime` the watchdog keeps the lease alive.
   * @throws {InvalidArgumentError} for bad options, before anything is sent.
   * @throws {ClientClosedError} when the client shuts down first.
   * @example
   * ```ts
   * await lock.lock();                       // or lock.lock({ leaseTime: 10_000 }): freed after 10 s
   * try {
   *   await work();
   * } finally {
   *   await lock.unlock();
   * }
   * ```
   */
  lock(options?: LockOptions): Promise<void> {
    return rejectingThrows(() => {
      const call = resolveCallOptions(options, ['leaseTime', 'threadId', 'signal']);
      if (call.threadId === undefined) this.ctx.scopes.warnIfWaitingForItself(this.name);
      return this.acquireHold(call, toNothing);
    });
  }

  /**
   * Tries to acquire, waiting up to `waitTime` ms; resolves whether it did.
   * @throws {InvalidArgumentError} for bad options, before anything is sent.
   * @throws {ClientClosedError} when the client shuts down first.
   * @example
   * ```ts
   * if (await lock.tryLock({ waitTime: 1_000, leaseTime: 10_000 })) {
   *   try {
   *     await work();
   *   } finally {
   *     await lock.unlock();
   *   }
   * }
   * ```
   */
  tryLock(options?: TryLockOptions): Promise<boolean> {
    return rejectingThrows(() => this.acquireHold(withSingleAttemptDefault(resolveCallOptions(options)), toBoolean));
  }

  /**
   * Releases one hold of the current owner.
   * @throws {LockNotHeldError} when the owner holds none (Redisson's IllegalMonitorStateException).
   * @throws {InvalidArgumentError} for bad options, before anything is sent.
   * @example
   * ```ts
   * await lock.unlock();                      // the owner of this client's last lock()
   * await lock.unlock({ threadId: 7 });       // an explicit owner, e.g. a Java thread id
   * ```
   */
  async unlock(options?: OwnerOptions): Promise<void> {
    const { threadId } = resolveCallOptions(options, ['threadId']);
    const current = threadId ?? this.ctx.scopes.resolve(this.name);
    if (current === undefined) throw this.notHeld('this client knows no held acquisition of it by the caller');
    await this.releaseHold(current);
  }

  /**
   * Deletes the lock whoever holds it and wakes a waiter; resolves whether it was held. The holder's
   * handles here report the lock lost.
   * @throws {ClientClosedError} after `shutdown()`.
   * @example
   * ```ts
   * if (await lock.forceUnlock()) console.warn('freed a lock someone still held');
   * ```
   */
  async forceUnlock(): Promise<boolean> {
    this.ctx.lifetime.throwIfAborted();
    const existed = await this.forceReleaseOnce();
    this.ledger.loseAll(this.name, 'it was force-unlocked');
    return existed;
  }

  /**
   * Whether anyone holds the lock.
   * @throws {ClientClosedError} after `shutdown()`.
   * @example
   * ```ts
   * if (await lock.isLocked()) console.log(`busy for ${await lock.remainTimeToLive()} ms more`);
   * ```
   */
  async isLocked(): Promise<boolean> {
    this.ctx.lifetime.throwIfAborted();
    return isLocked(this.ctx.scripts, this.name);
  }

  /**
   * Whether the current owner (its scope, or this client's unscoped holder of the lock) holds it.
   * @throws {ClientClosedError} after `shutdown()`.
   * @example
   * ```ts
   * await lock.using(async () => {
   *   console.log(await lock.isHeldByCurrentThread()); // true
   * });
   * ```
   */
  async isHeldByCurrentThread(): Promise<boolean> {
    const current = this.ctx.scopes.resolve(this.name);
    return current === undefined ? false : this.isHeldByThread(current);
  }

  /**
   * Whether `<clientId>:<threadId>` holds the lock.
   * @throws {InvalidArgumentError} unless `threadId` is a positive safe integer.
   * @throws {ClientClosedError} after `shutdown()`.
   * @example
   * ```ts
   * const handle = await lock.acquire();
   * console.log(await lock.isHeldByThread(handle.threadId)); // true
   * ```
   */
  async isHeldByThread(threadId: number): Promise<boolean> {
    checkThreadId(threadId);
    this.ctx.lifetime.throwIfAborted();
    return isHeldBy(this.ctx.scripts, this.name, this.ownerOf(threadId));
  }

  /**
   * The current owner's hold count; 0 when it does not hold the lock.
   * @throws {InvalidArgumentError} for bad options.
   * @throws {ClientClosedError} after `shutdown()`.
   * @example
   * ```ts
   * await redisson.run(async () => {
   *   await lock.lock();
   *   await lock.lock();
   *   console.log(await lock.getHoldCount()); // 2
   *   await lock.unlock();
   *   await lock.unlock();
   * });
   * ```
   */
  async getHoldCount(options?: OwnerOptions): Promise<number> {
    const { threadId } = resolveCallOptions(options, ['threadId']);
    const current = threadId ?? this.ctx.scopes.resolve(this.name);
    if (current === undefined) return 0;
    this.ctx.lifetime.throwIfAborted();
    return holdCount(this.ctx.scripts, this.name, this.ownerOf(current));
  }

  /**
   * Time left on the lease in ms: -2 when the lock is free, -1 when held without expiry.
   * @throws {ClientClosedError} after `shutdown()`.
   * @example
   * ```ts
   * const ttl = await lock.remainTimeToLive();
   * if (ttl === -2) console.log('free');
   * ```
   */
  async remainTimeToLive(): Promise<number> {
    this.ctx.lifetime.throwIfAborted();
    return remainTimeToLive(this.ctx.scripts, this.name);
  }

  /*
   * The handle surface.
   */

  /**
   * Acquires and resolves a {@link Handle}; waits as long as it takes.
   * @throws {LockAcquireTimeoutError} when a given `waitTime` runs out.
   * @throws {InvalidArgumentError} for bad options, before anything is sent.
   * @throws {ClientClosedError} when the client shuts down first.
   * @example
   * ```ts
   * const handle = await lock.acquire({ waitTime: 5_000 });
   * try {
   *   await work(handle.signal);             // aborts if the lease is lost meanwhile
   * } finally {
   *   await handle.release();
   * }
   * ```
   */
  acquire(options?: AcquireOptions): Promise<Handle> {
    return rejectingThrows(() => this.acquireHold(resolveCallOptions(options), toHandle));
  }

  /**
   * Like {@link acquire}, but resolves `null` instead of timing out; no `waitTime`: a single attempt.
   * @throws {InvalidArgumentError} for bad options, before anything is sent.
   * @throws {ClientClosedError} when the client shuts down first.
   * @example
   * ```ts
   * const handle = await lock.tryAcquire();
   * if (handle === null) return 'someone else is on it';
   * try {
   *   return await work();
   * } finally {
   *   await handle.release();
   * }
   * ```
   */
  tryAcquire(options?: AcquireOptions): Promise<Handle | null> {
    return rejectingThrows(() => this.acquireHold(withSingleAttemptDefault(resolveCallOptions(options)), toHandleOrNull));
  }

  /**
   * Runs `fn` holding the lock, inside an owner scope (the caller's, or a new one), and releases it
   * afterwards. `fn` gets the handle's `signal`, which aborts if the lock is lost meanwhile.
   * @throws {LockNotHeldError} when the lock was lost before `fn` finished: `fn`'s result is then
   *   dropped, as the work may not have been exclusive.
   * @throws {LockAcquireTimeoutError} when a given `waitTime` runs out.
   * @throws {InvalidArgumentError} when `fn` is not a function or for bad options.
   * @example
   * ```ts
   * const total = await lock.using(async (signal) => {
   *   const rows = await fetchRows({ signal }); // stop early if the lock is lost
   *   return rows.length;
   * }, { waitTime: 5_000 });
   * ```
   */
  async using<T>(fn: (signal: AbortSignal) => Promise<T> | T, options?: AcquireOptions): Promise<T> {
    if (typeof fn !== 'function') throw new InvalidArgumentError('using() needs a function');
    const call = resolveCallOptions(options);
    return this.ctx.scopes.run(async () => {
      const handle = await this.acquireHold(call, toHandle);
      let result: T;
      try {
        result = await fn(handle.signal);
      } catch (error) {
        await handle.release().catch((releaseError: unknown) =>
          this.ctx.logger.debug('release after a failed using() callback failed', { name: this.name, error: releaseError }),
        );
        throw error;
      }
      await handle.release();
      return result;
    });
  }

  /**
   * @internal For composite locks (MultiLock, RedLock), which checked the options already and watch
   * and release the hold themselves: {@link tryAcquire}, resolving the bare {@link Hold} (no handle)
   * or what the last attempt saw of the holder (its TTL).
   */
  tryAcquireMember(call: CallOptions): Promise<Hold | HeldElsewhere> {
    return rejectingThrows(() => this.acquireHold(withSingleAttemptDefault(call), toHoldOrTtl));
  }

  /** @internal Runs `fn` in this lock's client's owner scope (the open one, or a new one). */
  inOwnerScope<T>(fn: () => T): T {
    return this.ctx.scopes.run(fn);
  }

  /** @internal Releases one hold of `threadId`, counted in `lease` if known (used by `unlock` and handles). */
  releaseHold(threadId: number, lease?: HandleLease): Promise<void> {
    const { lifetime } = this.ctx;
    return lifetime.aborted ? Promise.reject(lifetime.reason) : this.release(threadId, lease as HeldLock | undefined);
  }

  /**
   * Releases one hold of `threadId`, even after shutdown (the connection is the caller's). When the
   * unlock fails in transit, or gets no reply before the hold's lease would end, it rejects with
   * `RedisUnavailableError` and the hold counts again, no longer renewed: lost when its term ends.
   */
  private async release(threadId: number, known?: HeldLock): Promise<void> {
    const owner = this.ownerOf(threadId);
    const sentAt = performance.now();
    const { ledger } = this;
    // Armed before the hold is released, so that the lease's timer, due earlier, serves it.
    const deadline = this.leaseEndOf(known?.holds ? known : ledger.find(this.name, owner));
    const record = ledger.release(this.name, owner, known);
    // Remaining holds keep the lease of the latest acquisition (Redisson's "internal lease").
    const leaseTime = record?.leaseTime ?? this.ctx.options.lockWatchdogTimeout;
    const unavailable = (cause: unknown) => new RedisUnavailableError(this.name, 'release', undefined, cause);
    const unlocking = replyWithin(this.releaseOnce(owner, leaseTime, newRequestId()), deadline, unavailable);
    // When this should free the lock, the next local waiter's attempt goes out right behind it.
    const handOff = record?.holds === 0 ? this.localHandOff(threadId) : undefined;
    let result: UnlockResult;
    try {
      result = await unlocking;
    } catch (error) {
      handOff?.unlocked(false);
      if (record && error instanceof RedisUnavailableError) ledger.unreleased(record);
      throw error;
    }
    handOff?.unlocked(result === 'released');
    if (result === 'decremented') {
      if (record && this.partialReleaseResetsLease) ledger.extend(record, sentAt, leaseTime);
      // The lock is still held (another reader's holds), but not by this owner any more.
      if (record?.holds === 0) this.ctx.scopes.forgetUnscoped(this.name, threadId);
    } else {
      // Redis says the owner holds nothing: holds still counted here are stale.
      if (record) ledger.forget(record);
      this.ctx.scopes.forgetUnscoped(this.name, threadId);
    }
    if (result === 'not-held') {
      throw this.notHeld('it was never acquired, was already released, or its lease expired', owner);
    }
    const heldMs = record ? performance.now() - record.heldSince : undefined;
    emitReleased(this.ctx.emit, { kind: this.kind, name: this.name, owner }, result === 'released', heldMs);
  }

  /**
   * The end of `record`'s lease as a deadline on the lease tracker's timer (at least the reply grace
   * away: a lease about to end leaves a healthy Redis time to answer), armed now; none without a
   * held record.
   */
  private leaseEndOf(record: HeldLock | undefined): Deadline | undefined {
    if (!record || record.holds === 0) return undefined;
    const at = Math.max(record.sentAt + record.leaseTime, performance.now() + this.ctx.replyBound.grace);
    let onEnd: (() => void) | undefined;
    const disarm = this.ctx.leases.until(at, () => onEnd?.());
    return (fire) => {
      onEnd = fire;
      return disarm;
    };
  }

  private localHandOff(threadId: number) {
    if (!this.handsOffLocally) return undefined;
    const channel = this.channelFor(threadId);
    const strategy = channel === undefined ? undefined : this.ctx.pubsub.strategyOf(channel);
    return strategy instanceof LocalHandOff ? strategy.handOff() : undefined;
  }

  /**
   * Acquires one hold, waiting up to `waitTime` (undefined: without limit), and resolves what
   * `outcome` makes of the owner's thread id (`undefined` when the time ran out). The acquisition
   * resolves that value itself, so a parked waiter keeps no suspended frames or chained callbacks.
   * It rejects before sending anything on a closed client or an aborted signal.
   * @internal Kinds with their own results (the fenced lock's token) pass their own `outcome`.
   */
  protected acquireHold<T>(call: CallOptions, outcome: Outcome<T>): Promise<T> {
    const scoped = call.threadId ?? this.ctx.scopes.current();
    const threadId = scoped ?? this.ctx.scopes.nextThreadId();
    const owner = this.ownerOf(threadId);
    // A holder re-entering takes nobody's turn (local waiters may be waiting for it): it never queues.
    const reentry = scoped !== undefined && (this.ledger.find(this.name, owner)?.holds ?? 0) > 0;
    return acquireWithWait(this.ctx, {
      name: this.name,
      kind: this.kind,
      attempts: new LockAttempts(this, this.ctx, threadId, owner, scoped === undefined, call, outcome),
      channel: this.channelFor(threadId),
      policy: this.wakePolicy,
      backOff: this.backOff,
      waitTime: call.waitTime,
      turnBound: call.leaseTime ?? this.ctx.options.lockWatchdogTimeout,
      queueFirst: this.queuesBehindLocalWaiters && !reentry,
      linger: scoped === undefined ? 0 : this.channelLinger,
      signal: call.signal,
    });
  }

  /** @internal One run of the acquire script, for {@link LockAttempts}. */
  attemptOnce(input: AttemptInput): Promise<AttemptResult> {
    return this.tryAcquireOnce(input);
  }

  /** @internal Undoes uncertain acquisitions, for {@link LockAttempts}; resolves once done (failures are logged). */
  undo(owner: string, holdsBefore: number): Promise<void> {
    return this.undoAcquire(owner, holdsBefore).then(
      () => undefined,
      (error: unknown) =>
        this.ctx.logger.debug('undoing an uncertain acquisition failed; the lease ends it', { name: this.name, owner, error }),
    );
  }

  /**
   * @internal Told by {@link LockAttempts} that an acquisition ended without acquiring; resolves
   * (never rejects) once the kind's clean-up is done, if it has one.
   */
  gaveUp(threadId: number, waitTime: number | undefined): Promise<void> | undefined {
    let cleanUp: Promise<unknown> | undefined;
    try {
      cleanUp = this.acquisitionGaveUp(threadId, waitTime);
    } catch (error) {
      cleanUp = Promise.reject(error);
    }
    return cleanUp?.then(
      () => undefined,
      (error: unknown) =>
        this.ctx.logger.debug('cleaning up after a given-up acquisition failed', { name: this.name, threadId, error }),
    );
  }

  /**
   * @internal Completes an acquisition (used by its attempts). One that landed just as the caller
   * gave up (or the client closed) is given back rather than held behind their back, and rejects.
   */
  concludeAcquisition(
    threadId: number,
    unscoped: boolean,
    signal: AbortSignal | undefined,
  ): Promise<never> | undefined {
    const { lifetime } = this.ctx;
    const cancelledBy = signal?.aborted ? signal : lifetime.aborted ? lifetime : undefined;
    if (cancelledBy) return this.giveBack(threadId, cancelledBy.reason);
    if (unscoped) this.ctx.scopes.rememberUnscoped(this.name, threadId);
    return undefined;
  }

  /** Releases a hold nobody wants any more, then rejects with `reason`. */
  private async giveBack(threadId: number, reason: unknown): Promise<never> {
    await this.release(threadId).catch((error: unknown) =>
      this.ctx.logger.debug('giving back an unwanted acquisition failed; the lease ends it', { name: this.name, error }),
    );
    throw reason;
  }

  /** @internal A {@link LockNotHeldError} for this lock. */
  protected notHeld(why: string, owner?: string): LockNotHeldError {
    const by = owner ? ` by owner ${owner}` : '';
    return new LockNotHeldError(`Lock '${this.name}' is not held${by}: ${why}`, this.name);
  }
}

/**
 * The attempts of one acquisition, and what its call resolves; the lock's hold ledger learns of
 * every hold they add.
 */
class LockAttempts<T> implements AttemptSource<T>, AttemptInput {
  private abandoned = false;
  private readonly name: string;
  /** The owner's record, once an attempt acquired. */
  private acquired: HeldLock | undefined;
  /** The fencing token the acquiring attempt reported, if its kind draws one. */
  private fencingToken: number | undefined;
  /** The kind's clean-up after giving up, if any; a time-out resolves after it. */
  private cleanUp: Promise<void> | undefined;
  readonly leaseTime: number;
  readonly waitTime: number | undefined;
  believedHolds = 0;
  /** The holder's TTL the latest refused attempt reported. */
  private lastTtl = -1;

  constructor(
    private readonly lock: BaseLock,
    ctx: ClientContext,
    readonly threadId: number,
    readonly owner: string,
    private readonly unscoped: boolean,
    private readonly call: CallOptions,
    private readonly outcome: Outcome<T>,
  ) {
    this.name = lock.name;
    this.leaseTime = call.leaseTime ?? ctx.options.lockWatchdogTimeout;
    this.waitTime = call.waitTime;
  }

  conclude(acquired: boolean): T | Promise<T> {
    const { lock, threadId, call } = this;
    const record = this.acquired;
    if (!acquired || !record) {
      const { cleanUp, outcome, lastTtl } = this;
      return cleanUp ? cleanUp.then(() => outcome(lock, undefined, call, lastTtl)) : outcome(lock, undefined, call, lastTtl);
    }
    return (
      lock.concludeAcquisition(threadId, this.unscoped, call.signal) ??
      this.outcome(lock, { threadId, lease: record, fencingToken: this.fencingToken }, call, this.lastTtl)
    );
  }

  abandon(): void {
    this.abandoned = true;
  }

  gaveUp(): void {
    this.cleanUp = this.lock.gaveUp(this.threadId, this.waitTime);
  }

  /**
   * One run of the acquire script. A success is counted before anyone can see it (so no release
   * can race it), unless the caller abandoned the attempt meanwhile: then it is undone. A failure in
   * transit leaves the outcome unknown, so whatever it may have added is undone too, unless the kind
   * raised a {@link RedissonError} from the script's answer (a refusal, such as a non-reentrant
   * lock's re-acquire): the script ran and changed nothing. (Should one
   * owner run parallel acquisitions of one lock and one of them fail in transit, the undo cannot
   * tell whose hold it removes; one owner's holds are one logical thread's, so this stays rare.)
   */
  async attempt(): Promise<number | null> {
    const { lock, name, owner } = this;
    const { ledger } = lock;
    const sentAt = performance.now();
    const record = ledger.beginAcquire(name, owner, lock.kind);
    const believedHolds = (this.believedHolds = record.believedHolds);
    let ttl: number | null;
    try {
      const result = await lock.attemptOnce(this);
      if (result !== null && typeof result === 'object') {
        this.fencingToken = result.fencingToken;
        ttl = null;
      } else {
        ttl = result;
      }
    } catch (error) {
      ledger.endAcquire(record);
      // Waited for: an attempt sent again (a failover retried within the wait) must not be overtaken by it.
      if (!(error instanceof RedissonError)) await lock.undo(owner, believedHolds);
      throw error;
    }
    if (ttl !== null) this.lastTtl = ttl;
    if (ttl !== null || this.abandoned) {
      ledger.endAcquire(record);
      if (ttl === null) void lock.undo(owner, believedHolds);
      return ttl;
    }
    ledger.endAcquire(record, { sentAt, leaseTime: this.leaseTime, renew: this.call.leaseTime === undefined });
    this.acquired = record;
    return ttl;
  }
}

/** @internal An acquired hold: the owner's thread id, the record it counts in, its fencing token if any. */
export interface Hold {
  threadId: number;
  lease: HeldLock;
  /** The token the acquisition drew; `undefined` for kinds without fencing. */
  fencingToken: number | undefined;
}

/**
 * @internal What a call resolves, made from the acquired hold (`undefined`: the wait time ran out;
 * `ttl` is then the holder's TTL as the last attempt saw it).
 */
export type Outcome<T> = (lock: BaseLock, hold: Hold | undefined, call: CallOptions, ttl: number) => T;

const toNothing: Outcome<void> = () => undefined;
const toBoolean: Outcome<boolean> = (_lock, hold) => hold !== undefined;
const toHandleOrNull: Outcome<Handle | null> = (lock, hold) =>
  hold === undefined ? null : new Handle(lock, hold.threadId, hold.lease, hold.fencingToken);
const toHoldOrTtl: Outcome<Hold | HeldElsewhere> = (_lock, hold, _call, ttl) => hold ?? { ttl };
const toHandle: Outcome<Handle> = (lock, hold, call) => {
  if (hold === undefined) throw new LockAcquireTimeoutError(lock.name, call.waitTime ?? 0);
  return new Handle(lock, hold.threadId, hold.lease, hold.fencingToken);
};

/** @internal `tryLock` and `tryAcquire` make a single attempt unless given a `waitTime`. */
export function withSingleAttemptDefault(call: CallOptions): CallOptions {
  return call.waitTime === undefined ? { ...call, waitTime: 0 } : call;
}

/** @internal Runs `start`, turning a synchronous throw (bad input, closed client) into a rejection. */
export function rejectingThrows<T>(start: () => Promise<T>): Promise<T> {
  try {
    return start();
  } catch (error) {
    return Promise.reject(error);
  }
}
