import type { ClientContext } from '../kernel/context';
import { RFairLock, fairLockKind } from './fair-lock';

const NON_REENTRANT_FAIR_LOCK = fairLockKind(false);

/**
 * A fair lock its holder cannot take twice (Redisson's `RedissonNonReentrantFairLock`): same keys,
 * queue, channels and scripts as {@link RFairLock}, but a re-acquire by the owner holding it rejects
 * at once with `LockReentryError` instead of re-entering; other owners wait in the queue as usual.
 * Get one from `RedissonClient.getNonReentrantFairLock`.
 *
 * @example
 * ```ts
 * const lock = redisson.getNonReentrantFairLock('queue-head');
 * await lock.using(async () => {
 *   await lock.tryLock(); // rejects with LockReentryError: this owner holds it already
 * });
 * ```
 * @category Locks
 */
export class RNonReentrantFairLock extends RFairLock {
  /** @internal Use `RedissonClient.getNonReentrantFairLock`. */
  constructor(ctx: ClientContext, name: string) {
    super(ctx, name, NON_REENTRANT_FAIR_LOCK);
  }
}
