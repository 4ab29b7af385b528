import { fairWaiterChannel } from '../keys';
import { wakeOne } from '../kernel/pubsub/wake';
import {
  acquireFairLock,
  fairAcquireFailed,
  forceUnlockFairLock,
  trimFairLock,
  unlockFairLock,
} from './scripts/fair-lock';
import type { UnlockResult } from './scripts/lock';
import { BaseLock, type AttemptInput, type AttemptResult } from './base-lock';
import type { ClientContext } from '../kernel/context';
import { HASH_LOCK } from './rlock';

/**
 * A reentrant distributed lock granted in arrival order, stored and signalled exactly as Redisson's
 * `RFairLock`: RLock's hash `<name>`, a wait queue `redisson_lock_queue:{name}` (LIST of owner
 * tokens) with each waiter's deadline in `redisson_lock_timeout:{name}` (ZSET), and a channel per
 * waiter, `redisson_lock__channel:{name}:<clientId>:<threadId>`, on which a release wakes the
 * queue's head and no one else. Get one from `RedissonClient.getFairLock`.
 *
 * A waiter keeps its place until its deadline: its call's `waitTime`, or `fairLockWaitTimeout`
 * without one, after its turn could have come. A waiter whose process dies blocks those behind it
 * until then. Holds are renewed by the watchdog like RLock's.
 *
 * @example
 * ```ts
 * const lock = redisson.getFairLock('ticket-desk');
 * await lock.using((signal) => serve(signal), { waitTime: 30_000 }); // served in arrival order
 * ```
 * @category Locks
 */
export class RFairLock extends BaseLock {
  /** @internal */
  readonly kind: string = 'fair-lock';
  /** @internal */
  protected readonly wakePolicy = wakeOne;
  /** @internal Whether the holder may acquire again (a non-reentrant kind says no). */
  protected readonly reentrant: boolean = true;

  /** @internal Use `RedissonClient.getFairLock`. */
  constructor(ctx: ClientContext, name: string) {
    super(ctx, name, HASH_LOCK);
  }

  /** @internal A waiter's slack in the queue (Redisson: the wait time if positive, else the default). */
  private slack(waitTime: number | undefined): number {
    return waitTime !== undefined && waitTime > 0 ? waitTime : this.ctx.options.fairLockWaitTimeout;
  }

  /** @internal A waiter's channel is its own: only its owner comes back to it. */
  protected override get channelLinger(): number {
    return this.ctx.options.fairLockChannelLinger;
  }

  /** @internal Each waiter listens on a channel of its own. */
  protected channelFor(threadId: number): string {
    return fairWaiterChannel(this.name, this.ownerOf(threadId));
  }

  /** @internal A single attempt (`waitTime` 0) never joins the queue, as Redisson's `tryLock()`. */
  protected tryAcquireOnce({ owner, leaseTime, believedHolds, waitTime }: AttemptInput): Promise<AttemptResult> {
    return acquireFairLock(this.ctx.scripts, {
      name: this.name,
      owner,
      leaseTime,
      wait: this.slack(waitTime),
      believedHolds,
      enqueue: waitTime !== 0,
      reentrant: this.reentrant,
    });
  }

  /** @internal Leaves the queue (Redisson's `acquireFailed`); a single attempt never joined it. */
  protected override acquisitionGaveUp(threadId: number, waitTime: number | undefined): Promise<boolean> | undefined {
    if (waitTime === 0) return undefined;
    return fairAcquireFailed(this.ctx.scripts, this.name, this.ownerOf(threadId), this.slack(waitTime));
  }

  /** @internal */
  protected undoAcquire(owner: string, holdsBefore: number): Promise<number> {
    return trimFairLock(this.ctx.scripts, this.name, owner, holdsBefore);
  }

  /** @internal */
  protected releaseOnce(owner: string, leaseTime: number, requestId: string): Promise<UnlockResult> {
    return unlockFairLock(this.ctx.scripts, { name: this.name, owner, leaseTime, requestId });
  }

  /** @internal */
  protected forceReleaseOnce(): Promise<boolean> {
    return forceUnlockFairLock(this.ctx.scripts, this.name);
  }
}
