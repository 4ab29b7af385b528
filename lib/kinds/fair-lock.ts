import { fairLockQueue, fairWaiterChannel, ownerToken } from '../keys';
import type { ClientContext } from '../kernel/context';
import { BaseLock } from '../kernel/lock';
import type { LockKind, LockTarget } from '../kernel/lock-kind';
import { wakeOne } from '../kernel/pubsub/wake';
import {
  acquireFairLock,
  fairAcquireFailed,
  forceUnlockFairLock,
  trimFairLock,
  unlockFairLock,
} from './scripts/fair-lock';
import { newRequestId } from './scripts/lock';
import { HASH_LOCK, HASH_QUERIES } from './rlock';

/** A waiter's slack in the queue (Redisson: the wait time if positive, else the default). */
function slack({ ctx }: LockTarget, waitTime: number | undefined): number {
  return waitTime !== undefined && waitTime > 0 ? waitTime : ctx.options.fairLockWaitTimeout;
}

/**
 * The fair lock's record, reentrant or not (the non-reentrant fair lock refuses a re-acquire in its
 * acquire script). A release wakes exactly the queue's head, on its own channel.
 */
export function fairLockKind(reentrant: boolean): LockKind {
  return {
    kind: reentrant ? 'fair-lock' : 'non-reentrant-fair-lock',
    holds: HASH_LOCK,
    ...HASH_QUERIES,
    attempt: (lock, { owner, leaseTime, believedHolds, waitTime }) =>
      acquireFairLock(lock.ctx.scripts, {
        name: lock.name,
        owner,
        leaseTime,
        wait: slack(lock, waitTime),
        believedHolds,
        enqueue: waitTime !== 0,
        reentrant,
      }),
    gaveUp: (lock, threadId, waitTime) =>
      waitTime === 0
        ? undefined
        : fairAcquireFailed(lock.ctx.scripts, lock.name, ownerToken(lock.ctx.clientId, threadId), slack(lock, waitTime)),
    trim: ({ ctx, name }, owner, holdsBefore) => trimFairLock(ctx.scripts, name, owner, holdsBefore),
    release: ({ ctx, name }, owner, leaseTime) => unlockFairLock(ctx.scripts, { name, owner, leaseTime, requestId: newRequestId() }),
    forceRelease: async ({ ctx, name }) => ({ existed: await forceUnlockFairLock(ctx.scripts, name), lost: [HASH_LOCK] }),
    queued: ({ ctx, name }) => ctx.scripts.redis.lrange(fairLockQueue(name), 0, -1),
    channel: ({ ctx, name }, threadId) => fairWaiterChannel(name, ownerToken(ctx.clientId, threadId)),
    wake: wakeOne,
    channelLinger: (options) => options.fairLockChannelLinger,
  };
}

const FAIR_LOCK = fairLockKind(true);

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
  /** @internal Use `RedissonClient.getFairLock`. */
  constructor(ctx: ClientContext, name: string, kind: LockKind = FAIR_LOCK) {
    super(ctx, name, kind);
  }
}
