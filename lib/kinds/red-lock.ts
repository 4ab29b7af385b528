import { InvalidArgumentError, LockNotHeldError, QuorumError, type MemberOutcome } from '../errors';
import type { CallOptions, OwnerOptions } from '../options';
import { coreOf, type BaseLock, type Hold } from '../kernel/lock';
import {
  BASE_WAIT_PER_LOCK_MS,
  CompositeLock,
  CUT_SHORT,
  giveBackWithin,
  memberHold,
  pause,
  releaseMember,
  settleWithin,
  type CompositeHold,
  type MemberHold,
  type MemberResult,
  type NotTaken,
  type Taken,
  type Rounds,
} from './composite';
import type { ClientContext } from '../kernel/context';
import { Handle } from '../kernel/handle';

/**
 * How long a member's reply may take beyond its wait before the member counts as `timed-out` (its
 * acquisition is given back if it lands later). Redisson's default response timeout.
 * @example
 * ```ts
 * // with a member down, one round of tryLock() settles after about this long
 * const roundBoundMs = MEMBER_REPLY_BOUND_MS;
 * ```
 * @category Locks
 */
export const MEMBER_REPLY_BOUND_MS = 3_000;

/**
 * Clock drift allowed for, in ms: 1 % of the lease plus 2 ms (the Redlock algorithm's figure).
 * @example
 * ```ts
 * clockDrift(30_000); // 302: a 30 s lease counts as valid for at most 29.698 s minus the time spent acquiring
 * ```
 * @category Locks
 */
export function clockDrift(leaseTime: number): number {
  return Math.floor(leaseTime * 0.01) + 2;
}

/** Delay between rounds that found no quorum: a random 20-120 ms, so contenders do not stay in step. */
const retryDelay = (): number => 20 + Math.random() * 100;

/**
 * A {@link Handle} of a RedLock, which also tells how much of the majority it got and for how
 * long the hold is valid.
 *
 * @example
 * ```ts
 * const handle = await redLock.acquire({ waitTime: 1_000, leaseTime: 10_000 });
 * console.log(`${handle.held} members, valid for ${handle.validity} ms`);
 * await handle.release();
 * ```
 * @category Handles
 */
export class RedLockHandle extends Handle {
  /** @internal Made by `RRedLock.acquire`. */
  constructor(
    lock: RRedLock,
    threadId: number,
    hold: CompositeHold,
    /** Members taken (at least the quorum). */
    readonly held: number,
    /**
     * Validity left when the acquisition ended, in ms: lease − time spent acquiring − clock drift
     * (1 % of the lease + 2 ms). With an explicit `leaseTime` the `signal` aborts once it runs out;
     * without one the watchdog renews every member and this is only the first term.
     */
    readonly validity: number,
  ) {
    super(lock, threadId, hold);
  }
}

/**
 * A majority lock over N independent Redis servers (Redisson's deprecated `RedissonRedLock`, with
 * the Redlock algorithm's validity check): held once N/2 + 1 members are taken within
 * lease − elapsed − drift. Members are tried in parallel, one round trip each; partial acquisitions
 * are given back. Nothing of its own is stored in Redis. Get one from `RedissonClient.getRedLock`.
 *
 * - Per round every member waits at most `max(waitTime / N, 1)` ms (bounded by the time left), as
 *   Redisson's per-member wait; without `waitTime`, `lock()` and `acquire()` run rounds of 1500 ms
 *   per member until they succeed, `tryLock()` and `tryAcquire()` one round of single attempts.
 * - A member whose reply takes more than its wait plus {@link MEMBER_REPLY_BOUND_MS} counts as
 *   timed out; should its acquisition land later, it is given back.
 * - `acquire()` rejects with {@link QuorumError} (each member's outcome) when the wait ends without a
 *   valid majority.
 * - The handle's `signal` aborts when fewer than the majority of its members are left, or (with an
 *   explicit lease) when its validity runs out.
 *
 * Read docs/multi-lock-and-red-lock.md before relying on it: Redisson deprecates RedLock, and the algorithm assumes
 * bounded clock drift and process pauses and gives no fencing token.
 *
 * @example
 * ```ts
 * // `redisson`, `b` and `c`: clients of three independent Redis servers
 * const redLock = redisson.getRedLock(redisson.getLock('job'), b.getLock('job'), c.getLock('job'));
 * console.log(redLock.quorum); // 2
 * await redLock.using(() => runJob(), { waitTime: 2_000 }); // QuorumError if no majority in time
 * ```
 * @category Locks
 */
export class RRedLock extends CompositeLock {
  /** @internal */
  readonly kind: string = 'red-lock';
  /** Members needed: N/2 + 1 (integer division), e.g. 2 of 3 or 3 of 5. */
  readonly quorum: number;

  /** @internal Use `RedissonClient.getRedLock`. */
  constructor(ctx: ClientContext, locks: readonly BaseLock[]) {
    super(ctx, locks, 'RedLock');
    const kind = coreOf(locks[0]!).kind.kind;
    locks.forEach((lock, i) => {
      if (coreOf(lock).kind.kind !== kind) {
        throw new InvalidArgumentError(
          `getRedLock(): member ${i} ('${lock.name}') is a ${lock.constructor.name}, member 0 a ${locks[0]!.constructor.name}; a majority of mixed kinds means nothing, give locks of one kind`,
        );
      }
    });
    this.quorum = Math.floor(locks.length / 2) + 1;
  }

  /** @internal */
  protected quorumOf(): number {
    return this.quorum;
  }

  /** @internal */
  protected async take(call: CallOptions, forever: boolean, rounds: Rounds): Promise<Taken | NotTaken> {
    const n = this.locks.length;
    const start = performance.now();
    const single = call.waitTime === undefined && !forever;
    const deadline = call.waitTime === undefined ? Infinity : start + call.waitTime;
    const perMember = call.waitTime === undefined ? BASE_WAIT_PER_LOCK_MS : Math.max(Math.floor(call.waitTime / n), 1);
    const leaseTime = call.leaseTime ?? this.ctx.options.lockWatchdogTimeout;
    const drift = clockDrift(leaseTime);
    const { signal } = call;
    const { grace } = this.ctx.replyBound;
    for (;;) {
      rounds.attempts += 1;
      const roundStart = performance.now();
      const wait = single || call.waitTime === 0 ? 0 : Math.max(0, Math.min(perMember, Math.floor(deadline - roundStart)));
      const settled = await this.round(call, wait);
      const members = this.taken(settled);
      if (signal?.aborted) {
        await giveBackWithin(this.giveBack(members), performance.now() + grace, this.logged('giving back after an abort failed'));
        throw signal.reason;
      }
      const validity = leaseTime - (performance.now() - roundStart) - drift;
      if (members.length >= this.quorum && validity > 0) {
        return { members, validity, validFor: call.leaseTime === undefined ? undefined : validity };
      }
      await giveBackWithin(this.giveBack(members), deadline + grace, this.logged('giving back a round without quorum failed'));
      const why = members.length >= this.quorum ? 'no-validity' : 'no-quorum';
      const error = new QuorumError(this.name, this.quorum, this.outcomes(settled), why);
      const left = deadline - performance.now();
      if (single || left <= 0) return { error };
      await pause(Math.min(retryDelay(), left), signal);
    }
  }

  /**
   * One round: every member's acquisition sent at once (one round trip each), each waiting up to
   * `wait` ms; resolves each member's result, in member order, once all settled or the reply bound
   * passed (a hold that lands later is given back).
   */
  private round(call: CallOptions, wait: number): Promise<MemberResult[]> {
    const member: CallOptions = { ...call, waitTime: wait };
    const pending = this.locks.map((lock) => coreOf(lock).tryAcquireMember(member));
    return settleWithin(pending, wait + MEMBER_REPLY_BOUND_MS, this.giveBackLate);
  }

  /** Gives back a hold whose acquisition landed after its round stopped waiting for it. */
  private readonly giveBackLate = (index: number, hold: Hold): void => void this.giveBack([memberHold(this.locks[index]!, hold)]);

  /** The member holds a round took, in member order. */
  private taken(settled: readonly MemberResult[]): MemberHold[] {
    const members: MemberHold[] = [];
    settled.forEach((result, i) => {
      if (result.status === 'fulfilled' && !('ttl' in result.value)) members.push(memberHold(this.locks[i]!, result.value));
    });
    return members;
  }

  /** Each member's outcome in a round, for {@link QuorumError}. */
  private outcomes(settled: readonly MemberResult[]): MemberOutcome[] {
    return settled.map((result, i): MemberOutcome => {
      const { name } = this.locks[i]!;
      if (result.status === 'rejected') {
        return result.reason === CUT_SHORT ? { name, status: 'timed-out' } : { name, status: 'unreachable', error: result.reason };
      }
      return 'ttl' in result.value ? { name, status: 'held', ttl: result.value.ttl } : { name, status: 'acquired' };
    });
  }

  /** @internal Releases all in parallel, one round trip; a member's failure is logged, not thrown (Redisson ignores them). */
  protected async giveBack(members: readonly MemberHold[]): Promise<void> {
    const results = await Promise.allSettled(members.map(releaseMember));
    for (const result of results) {
      if (result.status === 'rejected') this.logged('releasing a RedLock member failed; its lease ends it')(result.reason);
    }
  }

  /** @internal */
  protected async unlockMembers(options: OwnerOptions | undefined): Promise<void> {
    const results = await Promise.allSettled(this.locks.map((lock) => lock.unlock(options)));
    const released = results.filter((result) => result.status === 'fulfilled').length;
    for (const result of results) {
      if (result.status === 'rejected' && !(result.reason instanceof LockNotHeldError)) {
        this.logged('unlocking a RedLock member failed; its lease ends it')(result.reason);
      }
    }
    if (released === 0) {
      throw new LockNotHeldError(`Lock '${this.name}' is not held by the caller on any member`, this.name);
    }
  }

  /** @internal */
  protected override makeHandle(threadId: number, hold: CompositeHold, taken: Taken): Handle {
    return new RedLockHandle(this, threadId, hold, taken.members.length, taken.validity ?? 0);
  }

  /**
   * Acquires a majority; see {@link CompositeLock.acquire}. Resolves a {@link RedLockHandle}.
   * @throws {QuorumError} when the wait ends without a valid majority (each member's outcome inside).
   * @throws {InvalidArgumentError} for bad options, before anything is sent.
   * @throws {ClientClosedError} when the client (or a member's client) is shut down.
   * @example
   * ```ts
   * const handle = await redLock.acquire({ waitTime: 2_000, leaseTime: 10_000 });
   * try {
   *   await runJob(handle.signal); // aborts when validity runs out or the majority is lost
   * } finally {
   *   await handle.release();
   * }
   * ```
   */
  override acquire(options?: Parameters<CompositeLock['acquire']>[0]): Promise<RedLockHandle> {
    return super.acquire(options) as Promise<RedLockHandle>;
  }

  /**
   * See {@link CompositeLock.tryAcquire}. Resolves a {@link RedLockHandle} or `null` (no valid
   * majority in time).
   * @throws {InvalidArgumentError} for bad options, before anything is sent.
   * @throws {ClientClosedError} when the client (or a member's client) is shut down.
   * @example
   * ```ts
   * const handle = await redLock.tryAcquire({ leaseTime: 10_000 }); // one round of single attempts
   * if (handle === null) return 'another process runs the job';
   * await using _held = handle;
   * ```
   */
  override tryAcquire(options?: Parameters<CompositeLock['tryAcquire']>[0]): Promise<RedLockHandle | null> {
    return super.tryAcquire(options) as Promise<RedLockHandle | null>;
  }
}
