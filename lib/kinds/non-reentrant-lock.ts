import { LockReentryError } from '../errors';
import { acquireNonReentrantLock } from './scripts/non-reentrant-lock';
import type { LockKind } from '../kernel/lock-kind';
import type { ClientContext } from '../kernel/context';
import { RLOCK, RLock } from './rlock';

/** RLock's record with an acquire script that refuses a re-acquire by the holder. */
const NON_REENTRANT_LOCK: LockKind = {
  ...RLOCK,
  kind: 'non-reentrant-lock',
  async attempt({ ctx, name }, { owner, leaseTime, believedHolds }) {
    const found = await acquireNonReentrantLock(ctx.scripts, name, owner, leaseTime, believedHolds);
    if (found === 'held') throw new LockReentryError(name, owner);
    return found;
  },
};

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
  /** @internal Use `RedissonClient.getNonReentrantLock`. */
  constructor(ctx: ClientContext, name: string) {
    super(ctx, name, NON_REENTRANT_LOCK);
  }
}
