import { READ_UNLOCK_MESSAGE, lockChannel } from '../keys';
import type { HoldKind } from '../kernel/context';
import { LocalHandOff } from '../kernel/hand-off';
import { BaseLock } from '../kernel/lock';
import type { LockKind, LockTarget } from '../kernel/lock-kind';
import { wakeByMessage } from '../kernel/pubsub/wake';
import {
  acquireLock,
  forceUnlockLock,
  holdCount,
  isHeldBy,
  isLocked,
  newRequestId,
  remainTimeToLive,
  renewLocks,
  trimLock,
  unlockLock,
} from './scripts/lock';
import type { ClientContext } from '../kernel/context';

/** Locks stored as RLock's hash, renewed by extending the hash while the owner's field is there. */
export const HASH_LOCK: HoldKind = {
  renew: (scripts, batch, leaseTime) =>
    renewLocks(scripts, batch.map((lease) => lease.name), batch.map((lease) => lease.owner), leaseTime),
};

/** The queries of every kind kept in one Redisson lock hash. */
export const HASH_QUERIES = {
  isLocked: (lock: LockTarget) => isLocked(lock.ctx.scripts, lock.name),
  isHeldBy: (lock: LockTarget, owner: string) => isHeldBy(lock.ctx.scripts, lock.name, owner),
  holdCount: (lock: LockTarget, owner: string) => holdCount(lock.ctx.scripts, lock.name, owner),
  remainTimeToLive: (lock: LockTarget) => remainTimeToLive(lock.ctx.scripts, lock.name),
} satisfies Partial<LockKind>;

/**
 * RLock: Redisson's reentrant lock. Lock channels: `0` (unlock) wakes one waiter, `1` (read unlock)
 * wakes them all; a release that frees the lock is handed straight to the next local waiter.
 */
export const RLOCK: LockKind = {
  kind: 'lock',
  holds: HASH_LOCK,
  ...HASH_QUERIES,
  attempt: ({ ctx, name }, { owner, leaseTime, believedHolds }) => acquireLock(ctx.scripts, name, owner, leaseTime, believedHolds),
  trim: ({ ctx, name }, owner, holdsBefore) => trimLock(ctx.scripts, name, owner, holdsBefore),
  release: ({ ctx, name }, owner, leaseTime) => unlockLock(ctx.scripts, { name, owner, leaseTime, requestId: newRequestId() }),
  forceRelease: async ({ ctx, name }) => ({ existed: await forceUnlockLock(ctx.scripts, name), lost: [HASH_LOCK] }),
  channel: ({ name }) => lockChannel(name),
  wake: LocalHandOff.over(wakeByMessage([READ_UNLOCK_MESSAGE])),
  handsOffLocally: true,
};

/**
 * A reentrant distributed lock, stored and signalled exactly as Redisson's `RLock`: a hash holding one
 * field `<clientId>:<threadId>` with the hold count, and `0` published on
 * `redisson_lock__channel:{name}` when it is released. Get one from `RedissonClient.getLock`.
 *
 * The owner of a call is, in order: its `threadId` option, the current owner scope
 * (`redisson.run`, `lock.using`), else, to acquire, a fresh id; to release or query, the id of this
 * client's unscoped acquisition of the lock still held.
 *
 * @example
 * ```ts
 * const lock = redisson.getLock('invoice:42');
 * const sent = await lock.using(() => sendInvoice(42), { waitTime: 5_000 });
 * ```
 * @category Locks
 */
export class RLock extends BaseLock {
  /** @internal Made by `RedissonClient.getLock` (and, with their records, the kinds built on RLock). */
  constructor(ctx: ClientContext, name: string, kind: LockKind = RLOCK) {
    super(ctx, name, kind);
  }
}
