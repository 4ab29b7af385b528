import { LockAcquireTimeoutError, LockNotHeldError, RedissonError } from '../errors';
import { ownerToken } from '../keys';
import { resolveHolders, type LockHolder } from './owner-record';
import {
  checkThreadId,
  resolveCallOptions,
  type AcquireOptions,
  type CallOptions,
  type LockOptions,
  type OwnerOptions,
  type TryLockOptions,
} from '../options';
import {
  acquireWithWait,
  fallbackBackOff,
  type AttemptSource,
  type BackOff,
  type WaitRequest,
  type WaitStats,
} from './acquisition';
import type { ClientContext } from './context';
import { LocalHandOff } from './hand-off';
import { Handle, type HandleLease, type HandleOwner } from './handle';
import type { HeldLock, HoldLedger } from './hold-ledger';
import { holdName } from './leases/lease';
import { KEY_EVENTS, type ObjectListener } from './pubsub/key-events';
import type { WakePolicy } from './pubsub/wake';
import { checkCallback, holdWhile, withSingleAttemptDefault, type Holdable } from './holding';
import { rejectingThrows } from './rejecting';
import type { AttemptInput, AttemptResult, LockKind, LockTarget, ReleaseResult } from './lock-kind';
import { HoldRelease } from './release';

/**
 * @internal What {@link LockCore.tryAcquireMember} resolves when it did not acquire: the holder's
 * remaining TTL in ms as the last attempt saw it (-1: no expiry).
 */
export interface HeldElsewhere {
  readonly ttl: number;
}

/** @internal The engine behind a lock object; reached by the kinds' own verbs and composites through {@link coreOf}. */
export let coreOf: (lock: BaseLock) => LockCore;

/**
 * Every lock of the family (Redisson's `RedissonBaseLock`), driven by its kind's record
 * (`LockKind`): both surfaces, Java-style (`lock`, `tryLock`, `unlock`) and handles (`acquire`,
 * `tryAcquire`, `using`), over one wait loop, one hold ledger and one release path. The classes of
 * the kinds (`RLock`, `RFairLock`, ...) add their own verbs and override nothing.
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
export abstract class BaseLock implements Holdable {
  readonly #core: LockCore;

  static {
    coreOf = (lock) => lock.#core;
  }

  /** @internal Made by the client's factories. */
  protected constructor(
    ctx: ClientContext,
    /** The lock's name: the key of its hash. */
    readonly name: string,
    kind: LockKind,
  ) {
    this.#core = new LockCore(ctx, name, kind);
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
      if (call.threadId === undefined) this.#core.warnIfWaitingForItself();
      return this.#core.acquireHold(call, toNothing);
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
    return rejectingThrows(() => this.#core.acquireHold(withSingleAttemptDefault(resolveCallOptions(options)), toBoolean));
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
    const core = this.#core;
    const current = threadId ?? core.currentThreadId();
    if (current === undefined) throw core.notHeld('this client knows no held acquisition of it by the caller');
    await core.releaseHold(current);
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
    return this.#core.forceRelease();
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
    return this.#core.query((kind, target) => kind.isLocked(target));
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
    const current = this.#core.currentThreadId();
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
    const owner = this.#core.owner(threadId);
    return this.#core.query((kind, target) => kind.isHeldBy(target, owner));
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
    const core = this.#core;
    const current = threadId ?? core.currentThreadId();
    if (current === undefined) return 0;
    const owner = core.owner(current);
    return core.query((kind, target) => kind.holdCount(target, owner));
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
    return this.#core.query((kind, target) => kind.remainTimeToLive(target));
  }

  /**
   * Who holds the lock and, for a kind that queues in Redis (fair locks), who waits: each owner with
   * what its client recorded (service, host, pid, label, since; see the option `ownerInfo` and
   * `redisson.run(fn, { label })`), or `recorded: false` for a Java client or one that records
   * nothing. Read-only; a diagnostic, not a lock-free way to decide anything.
   * @throws {ClientClosedError} after `shutdown()`.
   * @example
   * ```ts
   * for (const h of await lock.holders()) {
   *   console.log(h.role, h.owner, h.recorded ? `${h.service} pid ${h.pid} ${h.label ?? ''}` : 'no record');
   * }
   * ```
   */
  async holders(): Promise<LockHolder[]> {
    return this.#core.query(async (kind, target) => {
      const { redis } = target.ctx.scripts;
      const [fields, queued] = await Promise.all([redis.hgetall(target.name), kind.queued ? kind.queued(target) : []]);
      return resolveHolders(redis, fields, queued);
    });
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
    return rejectingThrows(() => this.#core.acquireHold(resolveCallOptions(options), toHandle));
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
    return rejectingThrows(() => this.#core.acquireHold(withSingleAttemptDefault(resolveCallOptions(options)), toHandleOrNull));
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
    checkCallback(fn);
    const call = resolveCallOptions(options);
    const core = this.#core;
    return core.ctx.scopes.run(async () => holdWhile(await core.acquireHold(call, toHandle), fn, core.ctx.logger));
  }

  /*
   * Listeners (Redisson's RObservable).
   */

  /**
   * Calls `listener` when the lock's key expires (`onExpired`) or is deleted (`onDeleted`), whoever
   * did it (any client, Java or Node); resolves its id, unique in this client, once subscribed.
   * Driven by keyspace notifications: the server's `notify-keyspace-events` must include `Ex` and/or
   * `Eg` (or `EA`); when it does not, the listener stays registered but silent, and the client emits
   * `keyspaceNotificationsOff` once. Listeners do not keep the process alive and end at `shutdown()`.
   * @throws {InvalidArgumentError} for a listener with neither method.
   * @throws {ClientClosedError} after `shutdown()`.
   * @example
   * ```ts
   * const id = await lock.addListener({ onExpired: (name) => console.warn(`${name}: a lease ran out`) });
   * // later
   * await lock.removeListener(id);
   * ```
   */
  async addListener(listener: ObjectListener): Promise<number> {
    const ctx = this.#core.ctx;
    ctx.lifetime.throwIfAborted();
    return ctx.local(KEY_EVENTS).add(this.name, listener);
  }

  /**
   * Stops the listener `id` of this client (added through any lock); resolves once its
   * subscriptions nobody else uses are gone. An unknown id is ignored.
   * @example
   * ```ts
   * await lock.removeListener(id);
   * ```
   */
  async removeListener(id: number): Promise<void> {
    await this.#core.ctx.local(KEY_EVENTS).remove(id);
  }
}

/**
 * @internal The engine of one lock object: owner resolution, the hold ledger, acquire / trim / conclude / give
 * back, release with its hand-off, and lost-lease wiring, over the kind's verbs. Not exported from
 * the package: kinds' own verbs and composite locks reach it through {@link coreOf}.
 */
export class LockCore implements HandleOwner, LockTarget {
  constructor(
    readonly ctx: ClientContext,
    readonly name: string,
    readonly kind: LockKind,
  ) {}

  /*
   * Derived rather than stored: every parked waiter keeps its lock's engine.
   */

  /** The client's ledger of this kind's holds. */
  get ledger(): HoldLedger {
    return this.ctx.ledger(this.kind.holds);
  }

  /** The lease of an acquisition without `leaseTime`. */
  get watchdogLease(): number {
    return this.ctx.options.lockWatchdogTimeout;
  }

  /** What owner scopes remember this lock's unscoped holder under: its name, and its kind's part if any. */
  get holdName(): string {
    return holdName(this.name, this.kind.part);
  }

  /** The owner token of `threadId`. */
  owner(threadId: number): string {
    return this.kind.owner ? this.kind.owner(this, threadId) : ownerToken(this.ctx.clientId, threadId);
  }

  /** Runs one of the kind's read-only verbs, on an open client. */
  query<T>(verb: (kind: LockKind, target: LockTarget) => Promise<T>): Promise<T> {
    return rejectingThrows(() => {
      this.ctx.lifetime.throwIfAborted();
      return verb(this.kind, this);
    });
  }

  /** Deletes the lock whoever holds it; the holds it took count as lost here. Resolves whether it existed. */
  async forceRelease(): Promise<boolean> {
    this.ctx.lifetime.throwIfAborted();
    const { existed, lost } = await this.kind.forceRelease(this);
    for (const holds of lost) this.ctx.ledger(holds).loseAll(this.name, 'it was force-unlocked', this.kind.part);
    return existed;
  }

  /** Runs `fn` in this lock's client's owner scope (the open one, or a new one). */
  inOwnerScope<T>(fn: () => T): T {
    return this.ctx.scopes.run(fn);
  }

  /**
   * For composite locks (MultiLock, RedLock), which checked the options already and watch and
   * release the hold themselves: a `tryAcquire` resolving the bare {@link Hold} (no handle) or what
   * the last attempt saw of the holder (its TTL).
   */
  tryAcquireMember(call: CallOptions): Promise<Hold | HeldElsewhere> {
    return rejectingThrows(() => this.acquireHold(withSingleAttemptDefault(call), toHoldOrTtl));
  }

  /** Releases one hold of `threadId`, counted in `lease` if known (used by `unlock` and handles). */
  releaseHold(threadId: number, lease?: HandleLease): Promise<void> {
    const { lifetime } = this.ctx;
    return lifetime.aborted ? Promise.reject(lifetime.reason) : this.release(threadId, lease as HeldLock | undefined);
  }

  /**
   * Releases one hold of `threadId`, even after shutdown (the connection is the caller's). When the
   * unlock fails in transit, or gets no reply before the hold's lease would end, it rejects with
   * `RedisUnavailableError` and the hold counts again, no longer renewed: lost when its term ends.
   */
  private release(threadId: number, known?: HeldLock): Promise<void> {
    const { ledger, kind } = this;
    const owner = known?.holds ? known.owner : this.owner(threadId);
    const held = known?.holds ? known : ledger.find(this.name, owner, kind.part);
    const sentAt = performance.now();
    // Bounded by the end of the hold's lease (at least the reply grace away: a lease about to end
    // leaves a healthy Redis time to answer), on the lease tracker's timer. Armed before the hold is
    // released, while the lease's timer, due earlier, serves it.
    const leaseEnd = held?.holds ? Math.max(held.sentAt + held.leaseTime, sentAt + this.ctx.replyBound.grace) : undefined;
    const release = new HoldRelease(this, owner, sentAt, leaseEnd);
    const record = ledger.release(this.name, owner, held, kind.part);
    // Remaining holds keep the lease of the latest acquisition (Redisson's "internal lease").
    const leaseTime = record?.leaseTime ?? this.watchdogLease;
    let reply: Promise<ReleaseResult>;
    try {
      reply = kind.release(this, owner, leaseTime);
    } catch (error) {
      reply = Promise.reject(error);
    }
    return release.send(
      reply,
      record,
      leaseTime,
      // When this should free the lock, the next local waiter's attempt goes out right behind it.
      record?.holds === 0 ? this.localHandOff(threadId) : undefined,
    );
  }

  private localHandOff(threadId: number) {
    if (this.kind.handsOffLocally !== true) return undefined;
    const channel = this.kind.channel(this, threadId);
    const strategy = channel === undefined ? undefined : this.ctx.pubsub.strategyOf(channel);
    return strategy instanceof LocalHandOff ? strategy.handOff() : undefined;
  }

  /**
   * Acquires one hold, waiting up to `waitTime` (undefined: without limit), and resolves what
   * `outcome` makes of the owner's thread id (`undefined` when the time ran out). The acquisition
   * resolves that value itself, so a parked waiter keeps no suspended frames or chained callbacks.
   * It rejects before sending anything on a closed client or an aborted signal. Kinds with their own
   * results (the fenced lock's token) pass their own `outcome`.
   */
  acquireHold<T>(call: CallOptions, outcome: Outcome<T>): Promise<T> {
    const { scopes } = this.ctx;
    const scoped = call.threadId ?? scopes.current();
    const threadId = scoped ?? scopes.nextThreadId();
    return acquireWithWait(this.ctx, new LockAttempts(this, threadId, scoped === undefined, call, outcome));
  }

  /** Undoes uncertain acquisitions; resolves once done (failures are logged). */
  undo(owner: string, holdsBefore: number): Promise<void> {
    return rejectingThrows(() => this.kind.trim(this, owner, holdsBefore)).then(
      () => undefined,
      (error: unknown) =>
        this.ctx.logger.debug('undoing an uncertain acquisition failed; the lease ends it', { name: this.name, owner, error }),
    );
  }

  /** Told that an acquisition ended without acquiring; resolves (never rejects) once the kind's clean-up is done, if it has one. */
  gaveUp(threadId: number, waitTime: number | undefined): Promise<void> | undefined {
    if (!this.kind.gaveUp) return undefined;
    let cleanUp: Promise<unknown> | undefined;
    try {
      cleanUp = this.kind.gaveUp(this, threadId, waitTime);
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
   * Completes an acquisition (used by its attempts). One that landed just as the caller gave up (or
   * the client closed) is given back rather than held behind their back, and rejects. An `unscoped`
   * hold (its owner id is its own) is marked for a bare `unlock()` to find.
   */
  concludeAcquisition(hold: Hold, unscoped: boolean, signal: AbortSignal | undefined): Promise<never> | undefined {
    const { lifetime } = this.ctx;
    const cancelledBy = signal?.aborted ? signal : lifetime.aborted ? lifetime : undefined;
    if (cancelledBy) return this.giveBack(hold.threadId, cancelledBy.reason);
    if (unscoped) hold.lease.unscoped = true;
    return undefined;
  }

  /** The caller's thread id for this lock: its owner scope's, else this client's unscoped holder's, if any. */
  currentThreadId(): number | undefined {
    return this.ctx.scopes.current() ?? this.ledger.unscopedHolder(this.holdName);
  }

  /** See {@link OwnerScopes.warnSelfWait}: told by a bare `lock()` as it starts. */
  warnIfWaitingForItself(): void {
    const { scopes } = this.ctx;
    if (scopes.current() === undefined && this.ledger.unscopedHolder(this.holdName) !== undefined) {
      scopes.warnSelfWait(this.name);
    }
  }

  /** Releases a hold nobody wants any more, then rejects with `reason`. */
  private async giveBack(threadId: number, reason: unknown): Promise<never> {
    await this.release(threadId).catch((error: unknown) =>
      this.ctx.logger.debug('giving back an unwanted acquisition failed; the lease ends it', { name: this.name, error }),
    );
    throw reason;
  }

  /** A {@link LockNotHeldError} for this lock. */
  notHeld(why: string, owner?: string): LockNotHeldError {
    const by = owner ? ` by owner ${owner}` : '';
    return new LockNotHeldError(`Lock '${this.name}' is not held${by}: ${why}`, this.name);
  }
}

/**
 * One acquisition of a lock: its attempts, what its call resolves, and its request to the wait loop.
 * The lock's hold ledger learns of every hold the attempts add. A parked waiter keeps this object
 * (it is also the request): what the loop and the kind's script read is derived from the lock and
 * the call on demand, not stored (thousands may wait).
 */
class LockAttempts<T> implements WaitRequest<T>, AttemptSource<T>, AttemptInput {
  private abandoned = false;
  /** What an attempt acquired, once one did. */
  private hold: Hold | undefined;
  believedHolds = 0;

  constructor(
    private readonly core: LockCore,
    readonly threadId: number,
    /** The owner is a fresh id, neither given nor a scope's. */
    private readonly unscoped: boolean,
    private readonly call: CallOptions,
    private readonly outcome: Outcome<T>,
  ) {}

  get owner(): string {
    return this.core.owner(this.threadId);
  }

  get leaseTime(): number {
    return this.call.leaseTime ?? this.core.watchdogLease;
  }

  get waitTime(): number | undefined {
    return this.call.waitTime;
  }

  /*
   * The request, as the wait loop reads it.
   */

  get name(): string {
    return this.core.name;
  }

  get kind(): string {
    return this.core.kind.kind;
  }

  get attempts(): this {
    return this;
  }

  get channel(): string | undefined {
    return this.core.kind.channel(this.core, this.threadId);
  }

  get policy(): WakePolicy {
    return this.core.kind.wake;
  }

  get backOff(): BackOff {
    return this.core.kind.backOff ?? fallbackBackOff;
  }

  /** A turn behind local waiters is bounded by the lease. */
  get turnBound(): number {
    return this.leaseTime;
  }

  /**
   * Queue behind local waiters, unless the kind says not to, or the owner holds the lock already: a
   * holder re-entering takes nobody's turn (local waiters may be waiting for it). Read as the
   * acquisition starts.
   */
  get queueFirst(): boolean {
    const { core } = this;
    if (core.kind.queuesBehindLocalWaiters === false) return false;
    return this.unscoped || (core.ledger.find(core.name, this.owner, core.kind.part)?.holds ?? 0) === 0;
  }

  /** A fresh owner's channel goes at once; a given owner may come back right after its release. */
  get linger(): number {
    const { kind, ctx } = this.core;
    return this.unscoped || !kind.channelLinger ? 0 : kind.channelLinger(ctx.options);
  }

  get signal(): AbortSignal | undefined {
    return this.call.signal;
  }

  /** Deadlock detection's watch of the wait, when the client runs it. */
  get watch(): WaitRequest<T>['watch'] {
    const { deadlocks } = this.core.ctx;
    return deadlocks && ((fail) => deadlocks.watch(this.core.name, this.threadId, fail));
  }

  /*
   * The attempts.
   */

  conclude(acquired: boolean, _stats: WaitStats, ttl: number): T | Promise<T> {
    const { core, call, hold } = this;
    if (!acquired || !hold) return this.outcome(core, undefined, call, ttl);
    return core.concludeAcquisition(hold, this.unscoped, call.signal) ?? this.outcome(core, hold, call, ttl);
  }

  abandon(): void {
    this.abandoned = true;
  }

  /** The kind's clean-up after giving up, if any: a time-out concludes after it. */
  gaveUp(): Promise<void> | undefined {
    return this.core.gaveUp(this.threadId, this.waitTime);
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
  attempt(): Promise<number | null> {
    const { core, owner } = this;
    const sentAt = performance.now();
    const record = core.ledger.beginAcquire(core.name, owner, this.threadId, core.kind.kind, core.kind.part);
    const { ownerRecord, scopes } = core.ctx;
    if (ownerRecord) ownerRecord.touch(this.threadId, scopes.labelOf(this.threadId));
    const believedHolds = (this.believedHolds = record.believedHolds);
    // Not an async function: every attempt of every waiter runs this, and one costs a frame object per call.
    return rejectingThrows(() => core.kind.attempt(core, this)).then(
      (result) => this.attempted(result, record, sentAt, believedHolds),
      (error: unknown) => this.attemptFailed(error, record, believedHolds),
    );
  }

  /** The script answered `result` to the attempt sent at `sentAt`, counted in `record`. */
  private attempted(result: AttemptResult, record: HeldLock, sentAt: number, believedHolds: number): number | null {
    const { core } = this;
    const acquired = result !== null && typeof result === 'object';
    const ttl = acquired ? null : result;
    if (ttl !== null || this.abandoned) {
      core.ledger.endAcquire(record);
      if (ttl === null) void core.undo(this.owner, believedHolds);
      return ttl;
    }
    core.ledger.endAcquire(record, { sentAt, leaseTime: this.leaseTime, renew: this.call.leaseTime === undefined });
    this.hold = { threadId: this.threadId, lease: record, fencingToken: acquired ? result.fencingToken : undefined };
    return null;
  }

  /**
   * The attempt counted in `record` failed with `error`, which the attempt then rejects with: at once
   * for the kind's refusal, after the undo of what it may have added otherwise.
   */
  private attemptFailed(error: unknown, record: HeldLock, believedHolds: number): Promise<never> {
    this.core.ledger.endAcquire(record);
    if (error instanceof RedissonError) throw error;
    // Waited for: an attempt sent again (a failover retried within the wait) must not be overtaken by it.
    return this.core.undo(this.owner, believedHolds).then(() => {
      throw error;
    });
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
 * @internal What a call resolves, made from the acquired hold (`undefined`: the wait time ran out; `ttl` is
 * then the holder's TTL as the last attempt saw it).
 */
export type Outcome<T> = (lock: LockCore, hold: Hold | undefined, call: CallOptions, ttl: number) => T;

const toNothing: Outcome<void> = () => undefined;
const toBoolean: Outcome<boolean> = (_lock, hold) => hold !== undefined;
const toHandleOrNull: Outcome<Handle | null> = (lock, hold) =>
  hold === undefined ? null : new Handle(lock, hold.threadId, hold.lease, hold.fencingToken);
const toHoldOrTtl: Outcome<Hold | HeldElsewhere> = (_lock, hold, _call, ttl) => hold ?? { ttl };
const toHandle: Outcome<Handle> = (lock, hold, call) => {
  if (hold === undefined) throw new LockAcquireTimeoutError(lock.name, call.waitTime ?? 0);
  return new Handle(lock, hold.threadId, hold.lease, hold.fencingToken);
};
