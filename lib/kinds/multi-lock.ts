import { LockAcquireTimeoutError } from '../errors';
import type { CallOptions, OwnerOptions } from '../options';
import { coreOf, type BaseLock, type Hold } from '../kernel/lock';
import {
  BASE_WAIT_PER_LOCK_MS,
  CompositeLock,
  CUT_SHORT,
  giveBackWithin,
  memberHold,
  releaseMember,
  settleWithin,
  type MemberHold,
  type NotTaken,
  type Taken,
  type Rounds,
} from './composite';
import type { ClientContext } from '../kernel/context';

/** How long after twice the reply grace past its deadline the MultiLock stops waiting for a member, in ms. */
const SAFETY_NET_MS = 100;

/**
 * All-or-nothing over several locks of any kind, possibly on different clients and servers
 * (Redisson's `RedissonMultiLock`). Nothing of its own is stored in Redis: each member keeps its own
 * keys, channel and watchdog, so Java Redisson sees ordinary locks. Get one from
 * `RedissonClient.getMultiLock`.
 *
 * - Members are taken one at a time in order of name (ties keep the given order), so two
 *   MultiLocks over the same locks, listed differently, cannot deadlock.
 * - Each member waits at most what is left of the call's `waitTime`; `lock()` and `acquire()`
 *   without one run rounds of 1500 ms per member, as Redisson does. When a member cannot be had in
 *   time, every member taken is given back (an acquisition whose reply is still in flight too, once
 *   it lands) and, while time is left, the round starts again from the first member.
 * - Release goes member by member in reverse order.
 * - With an explicit `leaseTime`, every member gets that lease; a member whose lease ran out before
 *   the last one was taken fails the round. (Redisson instead stretches the leases to twice the wait
 *   while taking them and shortens them afterwards.)
 * - A handle's `signal` aborts as soon as any member is lost.
 *
 * @example
 * ```ts
 * const both = redisson.getMultiLock(redisson.getLock('account:1'), redisson.getLock('account:2'));
 * // taken in name order, so no deadlock with another MultiLock over the same accounts
 * await both.using((signal) => transfer(1, 2, signal), { waitTime: 5_000 });
 * ```
 * @category Locks
 */
export class RMultiLock extends CompositeLock {
  /** @internal */
  readonly kind: string = 'multi-lock';
  /** The members in the order they are taken. */
  private readonly ordered: readonly BaseLock[];

  /** @internal Use `RedissonClient.getMultiLock`. */
  constructor(ctx: ClientContext, locks: readonly BaseLock[]) {
    super(ctx, locks, 'MultiLock');
    // A stable sort: ties (one name on several servers) keep the given order.
    this.ordered = [...locks].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** @internal */
  protected quorumOf(taken: number): number {
    return taken;
  }

  /** @internal */
  protected async take(call: CallOptions, forever: boolean, rounds: Rounds): Promise<Taken | NotTaken> {
    const start = performance.now();
    const single = call.waitTime === undefined && !forever;
    const deadline = call.waitTime === undefined ? Infinity : start + call.waitTime;
    const roundLength = call.waitTime === undefined && !single ? this.ordered.length * BASE_WAIT_PER_LOCK_MS : Infinity;
    const { signal } = call;
    const { grace } = this.ctx.replyBound;
    for (;;) {
      rounds.attempts += 1;
      const roundEnd = Math.min(deadline, performance.now() + roundLength);
      const taken: MemberHold[] = [];
      let complete = true;
      for (const lock of this.ordered) {
        const waitTime = single ? 0 : Math.max(0, Math.floor(roundEnd - performance.now()));
        const pending = coreOf(lock).tryAcquireMember({ ...call, waitTime });
        // A member rejects by itself once its wait and the reply grace are over and Redis has not answered;
        // this cut, a moment later, is a safety net: it gives up a member acquisition still waiting for its
        // reply (given back if it lands).
        const late = (_index: number, hold: Hold): void =>
          void releaseMember(memberHold(lock, hold)).catch(this.logged('giving back a late member acquisition failed'));
        const bound = deadline - performance.now() + 2 * grace + SAFETY_NET_MS;
        const result = (await settleWithin([pending], bound, late))[0]!;
        if (result.status === 'rejected') {
          await giveBackWithin(this.giveBack(taken), deadline + grace, this.logged('giving back after a failed member acquisition failed'));
          if (result.reason !== CUT_SHORT) throw result.reason;
          signal?.throwIfAborted();
          return this.timedOut(call);
        }
        if ('ttl' in result.value) {
          complete = false;
          break;
        }
        taken.push(memberHold(lock, result.value));
      }
      // A member lost while the later ones were being taken (its lease ran out) fails the round.
      if (complete && taken.every((member) => member.lease.tracked)) return { members: taken };
      await giveBackWithin(this.giveBack(taken), deadline + grace, this.logged('giving back an incomplete round failed'));
      if (single || performance.now() >= deadline) return this.timedOut(call);
      signal?.throwIfAborted();
    }
  }

  /** @internal Releases in reverse order, every member even when one fails; rejects with the first failure. */
  protected async giveBack(members: readonly MemberHold[]): Promise<void> {
    let first: { error: unknown } | undefined;
    for (let i = members.length - 1; i >= 0; i--) {
      try {
        await releaseMember(members[i]!);
      } catch (error) {
        first ??= { error };
      }
    }
    if (first) throw first.error;
  }

  /** @internal */
  protected async unlockMembers(options: OwnerOptions | undefined): Promise<void> {
    let first: { error: unknown } | undefined;
    for (let i = this.ordered.length - 1; i >= 0; i--) {
      try {
        await this.ordered[i]!.unlock(options);
      } catch (error) {
        first ??= { error };
      }
    }
    if (first) throw first.error;
  }

  private timedOut(call: CallOptions): NotTaken {
    return { error: new LockAcquireTimeoutError(this.name, call.waitTime ?? 0) };
  }
}
