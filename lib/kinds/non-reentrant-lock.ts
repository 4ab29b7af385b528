import { LockReentryError } from '../errors';
import { acquireNonReentrantLock } from './scripts/non-reentrant-lock';
import type { AttemptInput, AttemptResult } from './base-lock';
import type { ClientContext } from '../kernel/context';
import { RLock } from './rlock';

/**
 * A lock its holder cannot take a second time (Redisson's `getNonReentrantLock`). Stored, signalled
 * and released exactly as an {@link RLock}; only acquiring differs: when the owner asking (the same
 * `<clientId>:<threadId>`, i.e. the same owner scope or explicit `threadId`) already holds it, the
 * call rejects at once with {@link LockReentryError} instead of re-entering or waiting for itself,
 * and the existing hold is kept. Other owners wait as for an RLock. Get one from
 * `RedissonClient.getNonReentrantLock`. Every acquiring method (`lock`, `tryLock`, `acquire`,
 * `tryAcquire`, `using`) may therefore also reject with {@link LockReentryError}.
 *
 * @example
 * ```ts
 * const lock = redisson.getNonReentrantLock('nightly-export');
 * await redisson.run(async () => {
 *   await lock.lock();
 *   await lock.lock().catch((error: unknown) => console.log(error instanceof LockReentryError)); // true
 *   await lock.unlock(); // the first hold is still there
 * });
 * ```
 * @category Locks
 */
export class RNonReentrantLock extends RLock {
  /** @internal */
  override readonly kind: string = 'non-reentrant-lock';
  /** @internal Use `RedissonClient.getNonReentrantLock`. */
  constructor(ctx: ClientContext, name: string) {
    super(ctx, name);
  }

  /**
   * @internal
   * @throws {LockReentryError} when the owner already holds the lock.
   */
  protected override async tryAcquireOnce({ owner, leaseTime, believedHolds }: AttemptInput): Promise<AttemptResult> {
    const found = await acquireNonReentrantLock(this.ctx.scripts, this.name, owner, leaseTime, believedHolds);
    if (found === 'held') throw new LockReentryError(this.name, owner);
    return found;
  }
}
