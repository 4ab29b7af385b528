import { RFairLock } from './fair-lock';

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
  /** @internal */
  override readonly kind: string = 'non-reentrant-fair-lock';
  /** @internal */
  protected override readonly reentrant: boolean = false;
}
