import { InvalidArgumentError, LockLostError } from '../errors';
import { checkCallback, holdWhile, type Holdable } from '../kernel/holding';
import { MAX_TIME_MS, resolveCallOptions, type AcquireOptions, type CallOptions, type LockOptions, type OwnerOptions, type TryLockOptions } from '../options';
import { BaseLock, coreOf, type HeldElsewhere, type Hold } from '../kernel/lock';
import type { ClientContext } from '../kernel/context';
import { Handle, type HandleLease } from '../kernel/handle';
import type { HeldLock } from '../kernel/hold-ledger';
import { emitAcquired, emitAcquireFailed, emitHoldLost, emitReleased, giveUpReason, type Holder } from '../kernel/hold-events';
import { ownerToken } from '../keys';

/**
 * Redisson's base wait per member: `lock()` and `acquire()` without `waitTime` run rounds of
 * `1500 ms x number of locks`, so a MultiLock never sits on its first members for long while a
 * later one is held elsewhere.
 * @example
 * ```ts
 * const round = BASE_WAIT_PER_LOCK_MS * multi.locks.length; // ms per round of multi.lock()
 * ```
 * @category Locks
 */
export const BASE_WAIT_PER_LOCK_MS = 1_500;

/** @internal What a member acquisition counts as when the composite stops waiting for it (its reply is late). */
export const CUT_SHORT: Error = Object.freeze(new Error('the composite lock stopped waiting for this member'));

/**
 * @internal One member hold of a composite: the member lock and the hold its acquisition counted.
 * No handle of its own: the composite watches the lease and releases through the lock.
 */
export interface MemberHold {
  readonly lock: BaseLock;
  readonly threadId: number;
  readonly lease: HeldLock;
}

/** @internal The member hold `lock`'s acquisition resolved. */
export function memberHold(lock: BaseLock, hold: Hold): MemberHold {
  return { lock, threadId: hold.threadId, lease: hold.lease };
}

/** @internal Releases one member hold; rejects with `LockNotHeldError` when Redis has none. */
export function releaseMember(member: MemberHold): Promise<void> {
  return coreOf(member.lock).releaseHold(member.threadId, member.lease);
}

/** @internal How many rounds over its members one acquisition of a composite sent (its `attempts`). */
export interface Rounds {
  attempts: number;
}

/** @internal What a successful round took. */
export interface Taken {
  /** The member holds, in the order they were taken. */
  members: MemberHold[];
  /** For RedLock: ms of validity left when the round ended (lease - elapsed - drift). */
  validity?: number;
  /** For RedLock with an explicit lease: the holds count as lost after this many ms. */
  validFor?: number;
}

/** @internal What a failed acquisition rejects with (acquire) or what tryLock turns into `false`. */
export interface NotTaken {
  error: Error;
}

/**
 * @internal Checks the members of a composite lock before anything is sent: at least one, each a
 * lock made by a RedissonClient, none given twice (it would wait for itself). Accepts the members
 * as arguments or as one array.
 */
export function checkMembers(args: readonly unknown[], what: string): BaseLock[] {
  const locks = args.length === 1 && Array.isArray(args[0]) ? [...(args[0] as unknown[])] : [...args];
  if (locks.length === 0) throw new InvalidArgumentError(`${what} needs at least one lock`);
  locks.forEach((lock, i) => {
    if (!(lock instanceof BaseLock)) {
      throw new InvalidArgumentError(
        `${what}: member ${i} is not a lock made by a RedissonClient (getLock, ...); a MultiLock or RedLock cannot be a member of another`,
      );
    }
  });
  const members = locks as BaseLock[];
  for (let i = 0; i < members.length; i++) {
    for (let j = i + 1; j < members.length; j++) {
      const a = members[i]!;
      const b = members[j]!;
      // One ledger per kind and client: the same ledger and name is the same lock on the same server.
      if (a === b || (coreOf(a).ledger === coreOf(b).ledger && a.name === b.name)) {
        throw new InvalidArgumentError(`${what}: lock '${a.name}' is given twice (members ${i} and ${j}); it would wait for itself`);
      }
    }
  }
  return members;
}

/** @internal One member acquisition's result, as `Promise.allSettled` reports it. */
export type MemberResult = PromiseSettledResult<Hold | HeldElsewhere>;

/**
 * @internal Waits for member acquisitions sent together and resolves each one's result, in order,
 * once all settled or once `ms` passed (infinite: no bound). One still pending then counts as
 * rejected with {@link CUT_SHORT} and is left to finish: should it take a hold after all, `late`
 * gets it, to give it back. A timer is all it adds (no AbortSignal, no listener per member); a
 * caller's own signal goes to the members directly.
 */
export function settleWithin(
  pending: readonly Promise<Hold | HeldElsewhere>[],
  ms: number,
  late: (index: number, hold: Hold) => void,
): Promise<MemberResult[]> {
  return new Promise((resolve) => {
    const results: (MemberResult | undefined)[] = new Array<MemberResult | undefined>(pending.length);
    let left = pending.length;
    const timer = Number.isFinite(ms) ? setTimeout(cut, Math.min(Math.max(0, ms), MAX_TIME_MS)) : undefined;
    timer?.unref();
    function cut(): void {
      for (let i = 0; i < results.length; i++) results[i] ??= CUT_SHORT_RESULT;
      resolve(results as MemberResult[]);
    }
    const settle = (i: number, result: MemberResult): void => {
      if (results[i]) {
        if (result.status === 'fulfilled' && !('ttl' in result.value)) late(i, result.value);
        return;
      }
      results[i] = result;
      if (--left > 0) return;
      clearTimeout(timer);
      resolve(results as MemberResult[]);
    };
    pending.forEach((member, i) => {
      member.then(
        (value) => settle(i, { status: 'fulfilled', value }),
        (reason: unknown) => settle(i, { status: 'rejected', reason }),
      );
    });
  });
}

const CUT_SHORT_RESULT: MemberResult = Object.freeze({ status: 'rejected', reason: CUT_SHORT });

/**
 * @internal Waits for a give-back at most until `until` (monotonic ms): a composite acquisition
 * that failed settles within its bound (its wait plus the reply grace) even when a member's server
 * does not answer. The give-back goes on (each member's release is bounded by its lease); its
 * failure is logged through `logged`.
 */
export function giveBackWithin(giving: Promise<void>, until: number, logged: (error: unknown) => void): Promise<void> {
  const watched = giving.catch(logged);
  const ms = Math.max(until - performance.now(), 0);
  if (!Number.isFinite(ms)) return watched;
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, Math.min(ms, MAX_TIME_MS));
    timer.unref();
    void watched.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * Resolves after `ms`, or rejects with the reason as soon as `signal` aborts; clears its timer and
 * listener either way.
 */
export function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, Math.max(0, ms));
    timer.unref();
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * @internal The hold of a composite lock, as its handle sees it: lost (once) when fewer than `quorum` of its
 * member holds are left, or when its validity runs out. It watches the members' leases (a lease
 * no longer tracked was lost already) and detaches from them on `dispose()`.
 */
export class CompositeHold implements HandleLease {
  private readonly listeners = new Set<(error: LockLostError) => void>();
  private readonly onMemberLost = (error: LockLostError): void => this.memberLost(error);
  private lostWith: LockLostError | undefined;
  private live: number;
  private timer: NodeJS.Timeout | undefined;
  private disposed = false;
  /** When it was acquired (monotonic ms), for `heldMs`. */
  readonly acquiredAt = performance.now();

  constructor(
    private readonly lockName: string,
    /** The member holds, in the order they were taken. */
    readonly members: readonly MemberHold[],
    private readonly quorum: number,
    validFor: number | undefined,
    /** Emits `holdLost` for this hold when it is lost. */
    private readonly lost: (error: LockLostError) => void,
  ) {
    this.live = members.length;
    for (const { lease } of members) {
      if (lease.tracked) lease.watch(this.onMemberLost);
      else this.memberLost(undefined);
    }
    if (validFor !== undefined && !this.lostWith) {
      this.timer = setTimeout(validityEnded, Math.min(Math.max(0, validFor), MAX_TIME_MS), this);
      this.timer.unref();
    }
  }

  /** @internal The validity timer fired. */
  validityEnded(): void {
    this.timer = undefined;
    const owner = this.members[0] ? `thread ${this.members[0].threadId}` : '';
    this.lose(new LockLostError(`Lock '${this.lockName}' ran out of validity (lease minus acquisition time and clock drift)`, this.lockName, owner));
  }

  watch(listener: (error: LockLostError) => void): void {
    if (this.lostWith) listener(this.lostWith);
    else this.listeners.add(listener);
  }

  unwatch(listener: (error: LockLostError) => void): void {
    this.listeners.delete(listener);
  }

  /** Stops watching the members and the clock. */
  dispose(): void {
    this.disposed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    for (const { lease } of this.members) lease.unwatch(this.onMemberLost);
  }

  private memberLost(cause: LockLostError | undefined): void {
    this.live -= 1;
    if (this.live >= this.quorum) return;
    const which = cause ? `member '${cause.lockName}' was lost: ${cause.message}` : 'a member was lost';
    const left = this.quorum === this.members.length ? '' : ` (${this.live} of the ${this.quorum} needed are left)`;
    this.lose(new LockLostError(`Lock '${this.lockName}' was lost: ${which}${left}`, this.lockName, cause?.owner ?? ''));
  }

  private lose(error: LockLostError): void {
    if (this.lostWith || this.disposed) return;
    this.lostWith = error;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.lost(error);
    for (const listener of [...this.listeners]) listener(error);
  }
}

function validityEnded(hold: CompositeHold): void {
  hold.validityEnded();
}

/**
 * What MultiLock and RedLock share: the Java-style surface (`lock`, `tryLock`, `unlock`) and the
 * handle surface (`acquire`, `tryAcquire`, `using`) over member locks that may live on different
 * clients and servers. Nothing of its own is stored in Redis.
 *
 * @example
 * ```ts
 * async function holdingAll<T>(lock: CompositeLock, fn: () => Promise<T>): Promise<T> {
 *   return lock.using(fn, { waitTime: 5_000 }); // a MultiLock or a RedLock
 * }
 * ```
 * @category Locks
 */
export abstract class CompositeLock implements Holdable {
  /** A name for messages and handles: the kind and the members' names, e.g. `MultiLock(a, b)`. */
  readonly name: string;
  /** The member locks, in the order given. */
  readonly locks: readonly BaseLock[];
  /** @internal The kind's name in events (`'multi-lock'`, `'red-lock'`). */
  abstract readonly kind: string;

  /** @internal */
  protected constructor(
    /** @internal The client that made it. */
    protected readonly ctx: ClientContext,
    locks: readonly BaseLock[],
    kind: string,
  ) {
    this.locks = Object.freeze([...locks]);
    this.name = `${kind}(${locks.map((lock) => lock.name).join(', ')})`;
  }

  /**
   * @internal Takes the members: one acquisition, counting its rounds in `rounds`. `forever`: no
   * `waitTime` means as long as it takes.
   */
  protected abstract take(call: CallOptions, forever: boolean, rounds: Rounds): Promise<Taken | NotTaken>;

  /** @internal Gives back member holds taken together. */
  protected abstract giveBack(members: readonly MemberHold[]): Promise<void>;

  /** @internal Members a hold needs to keep (all of them for a MultiLock, a majority for a RedLock). */
  protected abstract quorumOf(taken: number): number;

  /** @internal Releases every member's hold of the current owner (Java-style `unlock`). */
  protected abstract unlockMembers(options: OwnerOptions | undefined): Promise<void>;

  /**
   * Waits as long as it takes to hold every member (a RedLock: a majority).
   * @throws {InvalidArgumentError} for bad options, before anything is sent.
   * @throws {ClientClosedError} when a member's client shuts down first.
   * @example
   * ```ts
   * await multi.lock();
   * try {
   *   await work();
   * } finally {
   *   await multi.unlock();
   * }
   * ```
   */
  async lock(options?: LockOptions): Promise<void> {
    const call = resolveCallOptions(options, ['leaseTime', 'threadId', 'signal']);
    this.ctx.lifetime.throwIfAborted();
    const taken = await this.acquisition(call, true);
    if ('error' in taken) throw taken.error;
  }

  /**
   * Tries to hold every member (a RedLock: a majority), waiting up to `waitTime` ms (absent: one
   * attempt per member); resolves whether it did. On failure nothing taken is kept.
   * @throws {InvalidArgumentError} for bad options, before anything is sent.
   * @throws {ClientClosedError} when the client (or a member's client) is shut down.
   * @example
   * ```ts
   * if (await multi.tryLock({ waitTime: 2_000, leaseTime: 30_000 })) {
   *   try { await work(); } finally { await multi.unlock(); }
   * }
   * ```
   */
  async tryLock(options?: TryLockOptions): Promise<boolean> {
    const call = resolveCallOptions(options);
    this.ctx.lifetime.throwIfAborted();
    return !('error' in (await this.acquisition(call, false)));
  }

  /**
   * Releases the current owner's hold of every member.
   * @throws {LockNotHeldError} when the owner holds none of them (a MultiLock: when a member it
   *   should hold is not held; the other members are still released).
   * @throws {InvalidArgumentError} for bad options, before anything is sent.
   * @example
   * ```ts
   * await multi.unlock();                // the owner of this scope or of the last lock()
   * await multi.unlock({ threadId: 7 }); // an explicit owner
   * ```
   */
  async unlock(options?: OwnerOptions): Promise<void> {
    resolveCallOptions(options, ['threadId']);
    await this.unlockMembers(options);
    emitReleased(this.ctx.emit, this.holderOf(options?.threadId), true, undefined);
  }

  /**
   * Acquires and resolves a {@link Handle} over the members; waits as long as it takes unless
   * `waitTime` is given. Its `signal` aborts if the composite hold is lost (a MultiLock: any member;
   * a RedLock: below the majority, or its validity ran out with an explicit lease).
   * @throws {LockAcquireTimeoutError} (MultiLock) when a given `waitTime` runs out.
   * @throws {QuorumError} (RedLock) when the wait ends without a valid majority.
   * @throws {InvalidArgumentError} for bad options, before anything is sent.
   * @throws {ClientClosedError} when the client (or a member's client) is shut down.
   * @example
   * ```ts
   * const handle = await multi.acquire({ waitTime: 5_000 });
   * try {
   *   await work(handle.signal); // aborts when the composite hold is lost
   * } finally {
   *   await handle.release();
   * }
   * ```
   */
  async acquire(options?: AcquireOptions): Promise<Handle> {
    const call = resolveCallOptions(options);
    this.ctx.lifetime.throwIfAborted();
    return this.handleOf(await this.acquisition(call, call.waitTime === undefined), call);
  }

  /**
   * Like {@link acquire}, but resolves `null` instead of failing for time or quorum; no `waitTime`:
   * a single attempt per member.
   * @throws {InvalidArgumentError} for bad options, before anything is sent.
   * @throws {ClientClosedError} when the client (or a member's client) is shut down.
   * @example
   * ```ts
   * const handle = await multi.tryAcquire();
   * if (handle === null) return 'some member is busy';
   * await using _held = handle;
   * ```
   */
  async tryAcquire(options?: AcquireOptions): Promise<Handle | null> {
    const call = resolveCallOptions(options);
    this.ctx.lifetime.throwIfAborted();
    const taken = await this.acquisition(call, false);
    return 'error' in taken ? null : this.handleOf(taken, call);
  }

  /**
   * Runs `fn` holding the members, inside an owner scope of every member's client (the open one, or
   * a new one), and releases them afterwards. `fn` gets the combined `signal`.
   * @throws {LockNotHeldError} when the hold was lost before `fn` finished (`fn`'s result is dropped).
   * @throws {LockAcquireTimeoutError} / {QuorumError} as {@link acquire} does.
   * @throws {InvalidArgumentError} for a non-function or bad options.
   * @throws {ClientClosedError} when the client (or a member's client) is shut down.
   * @example
   * ```ts
   * const moved = await multi.using(async (signal) => transfer(1, 2, signal), { waitTime: 5_000 });
   * ```
   */
  async using<T>(fn: (signal: AbortSignal) => Promise<T> | T, options?: AcquireOptions): Promise<T> {
    checkCallback(fn);
    resolveCallOptions(options);
    const body = async (): Promise<T> => holdWhile(await this.acquire(options), fn, this.ctx.logger);
    const scoped = this.locks.reduceRight<() => Promise<T>>((inner, lock) => () => coreOf(lock).inOwnerScope(inner), body);
    return scoped();
  }

  /**
   * Whether the current owner holds every member (a RedLock: a majority). Never rejects: a member
   * that cannot be asked counts as not held.
   * @example
   * ```ts
   * await multi.using(async () => console.log(await multi.isHeldByCurrentThread())); // true
   * ```
   */
  async isHeldByCurrentThread(): Promise<boolean> {
    const held = await Promise.all(this.locks.map((lock) => lock.isHeldByCurrentThread().catch(() => false)));
    return held.filter(Boolean).length >= this.quorumOf(this.locks.length);
  }

  /**
   * Whether `<clientId>:<threadId>` holds every member (a RedLock: a majority), each on its client.
   * @throws {InvalidArgumentError} unless `threadId` is a positive safe integer.
   * @example
   * ```ts
   * await multi.lock({ threadId: 7 });            // every member for owner `<clientId>:7`
   * console.log(await multi.isHeldByThread(7)); // true
   * ```
   */
  async isHeldByThread(threadId: number): Promise<boolean> {
    resolveCallOptions({ threadId }, ['threadId']);
    const held = await Promise.all(this.locks.map((lock) => lock.isHeldByThread(threadId).catch(() => false)));
    return held.filter(Boolean).length >= this.quorumOf(this.locks.length);
  }

  /** @internal Releases a composite handle's members (called by the handle). */
  async releaseHold(_threadId: number, lease: HandleLease): Promise<void> {
    const hold = lease as CompositeHold;
    hold.dispose();
    await this.giveBack(hold.members);
    emitReleased(this.ctx.emit, this.holderOf(hold.members), true, performance.now() - hold.acquiredAt);
  }

  /** @internal */
  protected handleOf(taken: Taken | NotTaken, call: CallOptions): Handle {
    if ('error' in taken) throw taken.error;
    const holder = this.holderOf(taken.members);
    const lost = (error: LockLostError): void => emitHoldLost(this.ctx.emit, holder, error);
    const hold = new CompositeHold(this.name, taken.members, this.quorumOf(taken.members.length), taken.validFor, lost);
    return this.makeHandle(call.threadId ?? taken.members[0]!.threadId, hold, taken);
  }

  /** Takes the members (see {@link take}) and emits the acquisition's `acquired` or `acquireFailed` event. */
  private async acquisition(call: CallOptions, forever: boolean): Promise<Taken | NotTaken> {
    const startedAt = performance.now();
    const rounds: Rounds = { attempts: 0 };
    const stats = () => ({ waitMs: performance.now() - startedAt, attempts: rounds.attempts, wakeUps: 0 });
    let taken: Taken | NotTaken;
    try {
      taken = await this.take(call, forever, rounds);
    } catch (error) {
      emitAcquireFailed(this.ctx.emit, this.holderOf(call.threadId), giveUpReason(error, call.signal), stats());
      throw error;
    }
    if ('error' in taken) emitAcquireFailed(this.ctx.emit, this.holderOf(call.threadId), 'timeout', stats());
    else emitAcquired(this.ctx.emit, this.holderOf(taken.members), stats());
    return taken;
  }

  /**
   * Who this composite's events name: the owner of the first member hold taken, else the owner of
   * `threadId` (or of the open owner scope); `''` when there is none.
   */
  private holderOf(from: readonly MemberHold[] | number | undefined): Holder {
    const { kind, name } = this;
    if (typeof from === 'object') return { kind, name, owner: from[0]?.lease.owner ?? '' };
    const threadId = from ?? this.ctx.scopes.current();
    return { kind, name, owner: threadId === undefined ? '' : ownerToken(this.ctx.clientId, threadId) };
  }

  /** @internal */
  protected makeHandle(threadId: number, hold: CompositeHold, _taken: Taken): Handle {
    return new Handle(this, threadId, hold);
  }

  /** @internal Logs a failure the composite recovers from. */
  protected logged(what: string): (error: unknown) => void {
    return (error) => this.ctx.logger.debug(what, { name: this.name, error });
  }
}
