import { LockLostError, LockNotHeldError } from '../errors';

/** What a handle needs from the lock that issued it. */
export interface HandleOwner {
  readonly name: string;
  /** Releases one hold of `threadId`; rejects with `LockNotHeldError` when it holds none. */
  releaseHold(threadId: number): Promise<void>;
  /** Calls `listener` if this hold's lease is lost; returns the detach function. */
  watchLoss(threadId: number, listener: (error: LockLostError) => void): (() => void) | undefined;
}

/**
 * One acquisition of a lock. `signal` aborts with {@link LockLostError} if the lease is lost while
 * the handle is held; `release()` gives the hold back once (later calls do nothing). Works with
 * `await using`.
 */
export class LockHandle implements AsyncDisposable {
  /** The lock's name. */
  readonly name: string;
  private readonly controller = new AbortController();
  private readonly detach: (() => void) | undefined;
  private releasing: Promise<void> | undefined;

  /** @internal Made by `acquire`, `tryAcquire` and `using`. */
  constructor(
    private readonly lock: HandleOwner,
    /** Thread id of the owner token `<clientId>:<threadId>` this handle holds. */
    readonly threadId: number,
  ) {
    this.name = lock.name;
    this.detach = lock.watchLoss(threadId, (error) => this.controller.abort(error));
  }

  /** Aborts with {@link LockLostError} when the lock is lost while held. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Whether `release()` was called. */
  get released(): boolean {
    return this.releasing !== undefined;
  }

  /**
   * Releases this hold. The first call rejects with `LockNotHeldError` if the lock was lost or is no
   * longer held by this owner: the work it guarded may not have been exclusive. Later calls resolve
   * with the first call's outcome settled, doing nothing.
   */
  release(): Promise<void> {
    if (this.releasing) return this.releasing.catch(() => undefined);
    this.detach?.();
    this.releasing = this.lock.releaseHold(this.threadId).catch((error: unknown) => {
      const lost = this.signal.reason;
      if (error instanceof LockNotHeldError && lost instanceof LockLostError) {
        throw new LockNotHeldError(
          `${lost.message}; it was no longer held at release, so the work it guarded may not have been exclusive`,
          this.name,
          { cause: lost },
        );
      }
      throw error;
    });
    return this.releasing;
  }

  /** Same as {@link release}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }
}
