import { isTransportError } from '../connection';
import { LockNotHeldError, RedisUnavailableError, type LockLostError } from '../errors';
import { rejectingThrows } from './rejecting';

/**
 * @internal What a handle watches for the loss of its hold: a lock's `Lease`, or a composite lock's
 * combined hold (MultiLock, RedLock).
 */
export interface HandleLease {
  /** Calls `listener` once if the hold is lost. */
  watch(listener: (error: LockLostError) => void): void;
  /** Detaches a listener given to `watch`. */
  unwatch(listener: (error: LockLostError) => void): void;
}

/** @internal What a handle needs from the lock that issued it. */
export interface HandleOwner {
  readonly name: string;
  /**
   * Releases one hold of `threadId`, counted in `lease`; rejects with `LockNotHeldError` when it
   * holds none.
   */
  releaseHold(threadId: number, lease: HandleLease): Promise<void>;
}

/**
 * One acquisition of a lock (or of semaphore permits, see `PermitHandle`). `signal` aborts with {@link LockLostError} if the lease is lost while
 * the handle is held; `release()` gives the hold back once (later calls do nothing). Works with
 * `await using`.
 *
 * @example
 * ```ts
 * const handle = await redisson.getLock('cache:refresh').acquire({ waitTime: 2_000 });
 * try {
 *   await refresh({ signal: handle.signal });
 * } finally {
 *   await handle.release(); // rejects with LockNotHeldError if the lock was lost meanwhile
 * }
 *
 * // TypeScript 5.2+ or Node 24+: released when the block ends
 * await using held = await redisson.getLock('cache:refresh').acquire();
 * ```
 * @category Handles
 */
export class Handle implements AsyncDisposable {
  /** The lock's name. */
  readonly name: string;
  // Made on first use of `signal`: an AbortSignal costs more than the rest of the handle together.
  private controller: AbortController | undefined;
  private lostWith: LockLostError | undefined;
  private readonly onLost = (error: LockLostError): void => this.lose(error);
  private releasing: Promise<void> | undefined;

  /** @internal Made by `acquire`, `tryAcquire` and `using` (of a lock, a MultiLock or a RedLock). */
  constructor(
    private readonly lock: HandleOwner,
    /**
     * Thread id of the owner token `<clientId>:<threadId>` this handle holds; 0 for semaphore
     * permits, which have no owner thread.
     */
    readonly threadId: number,
    /** The lease the hold is counted in, which tells the handle of its loss. */
    private readonly lease: HandleLease,
    /**
     * The fencing token this acquisition drew: a number that grows with every acquisition of the
     * lock, for guarding writes elsewhere (see `RFencedLock`). `undefined` for kinds without tokens.
     */
    readonly fencingToken?: number,
  ) {
    this.name = lock.name;
    lease.watch(this.onLost);
  }

  /** Aborts with {@link LockLostError} when the lock is lost while held. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.lostWith) this.controller.abort(this.lostWith);
    }
    return this.controller.signal;
  }

  /** Whether `release()` was called. */
  get released(): boolean {
    return this.releasing !== undefined;
  }

  /**
   * Releases this hold. The first call rejects with `LockNotHeldError` if the lock was lost before it
   * (the signal aborted) or is no longer held by this owner: the work it guarded may not have been
   * exclusive. A lost lock is still released if Redis has it, so nothing outlives the handle. Later
   * calls do nothing, unless a lock's release rejected with `RedisUnavailableError`: then the hold
   * is still watched (its `signal` aborts once its lease ends unconfirmed) and a later call tries
   * again. Permits whose release failed in transit are not released twice (their outcome is unknown).
   * @throws {LockNotHeldError} on the first call, when the hold was lost or is gone from Redis.
   * @throws {RedisUnavailableError} when the unlock failed in transit or got no reply before the lease would end.
   * @throws {ClientClosedError} after the client's `shutdown()`.
   * @example
   * ```ts
   * await handle.release().catch((error: unknown) => {
   *   if (error instanceof LockNotHeldError) console.warn('the lock was lost while held');
   *   else throw error;
   * });
   * ```
   */
  release(): Promise<void> {
    if (this.releasing) return this.releasing.catch(() => undefined);
    this.lease.unwatch(this.onLost);
    // Not an async function: the release path is every holder's, and one costs a frame object per call.
    const lost = this.lostWith;
    this.releasing = rejectingThrows(() => this.lock.releaseHold(this.threadId, this.lease)).then(
      lost &&
        (() => {
          throw notExclusive(lost, this.name);
        }),
      (error: unknown) => this.releaseFailed(error, lost),
    );
    return this.releasing;
  }

  /**
   * The release rejected with `error`: throws what the caller's `release()` rejects with. `lost`: what
   * the hold was lost with before the release, if it was.
   */
  private releaseFailed(error: unknown, lost: LockLostError | undefined): never {
    if (error instanceof RedisUnavailableError) {
      // A lock's hold still counted, as far as this client knows: watched again, and releasable again.
      this.releasing = undefined;
      this.lease.watch(this.onLost);
    } else if (isTransportError(error)) {
      throw new RedisUnavailableError(this.name, 'release', undefined, error);
    }
    throw error instanceof LockNotHeldError && lost ? notExclusive(lost, this.name) : error;
  }

  private lose(error: LockLostError): void {
    this.lostWith = error;
    this.controller?.abort(error);
  }

  /** Same as {@link release}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }
}

/** What releasing a hold lost before the release rejects with. */
function notExclusive(lost: LockLostError, name: string): LockNotHeldError {
  return new LockNotHeldError(
    `${lost.message}; it was released after that, so the work it guarded may not have been exclusive`,
    name,
    { cause: lost },
  );
}
