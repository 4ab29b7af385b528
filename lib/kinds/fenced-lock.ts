import { acquireFencedLock, currentFencingToken, deleteFencedLock } from './scripts/fenced-lock';
import { resolveCallOptions, type AcquireOptions, type LockOptions, type TryLockOptions } from '../options';
import { withSingleAttemptDefault } from '../kernel/holding';
import { rejectingThrows } from '../kernel/rejecting';
import { coreOf, type Outcome } from '../kernel/lock';
import type { LockKind } from '../kernel/lock-kind';
import type { ClientContext } from '../kernel/context';
import type { Handle } from '../kernel/handle';
import { RLOCK, RLock } from './rlock';

/**
 * A {@link Handle} of a {@link RFencedLock}: its `fencingToken` is always set.
 * @example
 * ```ts
 * const handle: FencedLockHandle = await redisson.getFencedLock('ledger').acquire();
 * await store.append(entry, handle.fencingToken); // a number, never undefined
 * ```
 * @category Handles
 */
export type FencedLockHandle = Handle & {
  /** The token this acquisition drew, larger than every token drawn for the lock before. */
  readonly fencingToken: number;
};

const toToken: Outcome<number> = (_lock, hold) => hold!.fencingToken!;
const toTokenOrNull: Outcome<number | null> = (_lock, hold) => (hold === undefined ? null : hold.fencingToken!);

/** RLock's record with an acquire script that draws a fencing token on every acquisition. */
const FENCED_LOCK: LockKind = {
  ...RLOCK,
  kind: 'fenced-lock',
  async attempt({ ctx, name }, { owner, leaseTime, believedHolds }) {
    const found = await acquireFencedLock(ctx.scripts, name, owner, leaseTime, believedHolds);
    return found.acquired ? { fencingToken: found.token } : found.ttl;
  },
};

/**
 * A reentrant lock that hands out a fencing token with every acquisition (Redisson's
 * `RFencedLock`). Tokens come from the counter `redisson_lock_token:{name}`, incremented by every
 * acquisition, re-entries included, so a later acquisition always carries a larger token. Pass the
 * token along with every write the lock guards and have the store refuse a token smaller than the
 * largest it has seen: a holder whose lease ran out while it was paused is then stopped by the store
 * even though the lock could not stop it. Everything else (hash, channel, unlock, watchdog) is an
 * {@link RLock}'s. Get one from `RedissonClient.getFencedLock`.
 *
 * @example
 * ```ts
 * const lock = redisson.getFencedLock('ledger');
 * const token = await lock.lockAndGetToken();
 * await store.append(entry, token).finally(() => lock.unlock()); // the store refuses older tokens
 * ```
 * @category Locks
 */
export class RFencedLock extends RLock {
  /** @internal Use `RedissonClient.getFencedLock`. */
  constructor(ctx: ClientContext, name: string) {
    super(ctx, name, FENCED_LOCK);
  }

  /**
   * Waits as long as it takes for the lock, as {@link lock} does, and resolves this acquisition's
   * fencing token. Unlike Redisson's, a given `leaseTime` is applied.
   * @throws {InvalidArgumentError} for bad options, before anything is sent.
   * @throws {ClientClosedError} when the client shuts down first.
   * @example
   * ```ts
   * const token = await lock.lockAndGetToken({ leaseTime: 10_000 });
   * await store.append(entry, token);
   * await lock.unlock();
   * ```
   */
  lockAndGetToken(options?: LockOptions): Promise<number> {
    return rejectingThrows(() => {
      const call = resolveCallOptions(options, ['leaseTime', 'threadId', 'signal']);
      const core = coreOf(this);
      if (call.threadId === undefined) core.warnIfWaitingForItself();
      return core.acquireHold(call, toToken);
    });
  }

  /**
   * Tries to acquire, waiting up to `waitTime` ms, as {@link tryLock} does; resolves this
   * acquisition's fencing token, or `null` if the lock stayed busy. Without `waitTime`: a single
   * attempt (Redisson's no-argument variant would wait forever).
   * @throws {InvalidArgumentError} for bad options, before anything is sent.
   * @throws {ClientClosedError} when the client shuts down first.
   * @example
   * ```ts
   * const token = await lock.tryLockAndGetToken({ waitTime: 1_000 });
   * if (token === null) return 'busy';
   * await store.append(entry, token);
   * await lock.unlock();
   * ```
   */
  tryLockAndGetToken(options?: TryLockOptions): Promise<number | null> {
    return rejectingThrows(() => coreOf(this).acquireHold(withSingleAttemptDefault(resolveCallOptions(options)), toTokenOrNull));
  }

  /**
   * The last token handed out, by any client; `null` if the lock was never acquired.
   * @throws {ClientClosedError} after shutdown.
   * @example
   * ```ts
   * const latest = await lock.getToken(); // e.g. to seed a store's fencing check
   * ```
   */
  async getToken(): Promise<number | null> {
    return coreOf(this).query((_kind, { ctx, name }) => currentFencingToken(ctx.scripts, name));
  }

  /**
   * Acquires and resolves a handle carrying its `fencingToken`; waits as long as it takes.
   * @throws {LockAcquireTimeoutError} when a given `waitTime` runs out.
   * @throws {InvalidArgumentError} for bad options, before anything is sent.
   * @throws {ClientClosedError} when the client shuts down first.
   * @example
   * ```ts
   * const handle = await lock.acquire({ waitTime: 5_000 });
   * try {
   *   await store.append(entry, handle.fencingToken);
   * } finally {
   *   await handle.release();
   * }
   * ```
   */
  override acquire(options?: AcquireOptions): Promise<FencedLockHandle> {
    return super.acquire(options) as Promise<FencedLockHandle>;
  }

  /**
   * Like {@link acquire}, but resolves `null` instead of timing out; no `waitTime`: a single attempt.
   * @throws {InvalidArgumentError} for bad options, before anything is sent.
   * @throws {ClientClosedError} when the client shuts down first.
   * @example
   * ```ts
   * await using handle = await lock.tryAcquire();
   * if (handle) await store.append(entry, handle.fencingToken);
   * ```
   */
  override tryAcquire(options?: AcquireOptions): Promise<FencedLockHandle | null> {
    return super.tryAcquire(options) as Promise<FencedLockHandle | null>;
  }

  /**
   * Deletes the lock (whoever holds it, waking a waiter) and its token counter, as Redisson's
   * `delete()` does; resolves whether either existed. Tokens then start again from 1, so a store
   * that remembers older, larger tokens would refuse every new holder: prefer {@link forceUnlock},
   * which frees the lock and keeps the counter.
   * @throws {ClientClosedError} after shutdown.
   * @example
   * ```ts
   * await lock.delete(); // only when retiring the lock: tokens restart at 1
   * ```
   */
  async delete(): Promise<boolean> {
    const core = coreOf(this);
    const existed = await core.query((_kind, { ctx, name }) => deleteFencedLock(ctx.scripts, name));
    core.ledger.loseAll(this.name, 'it was deleted');
    return existed;
  }
}
