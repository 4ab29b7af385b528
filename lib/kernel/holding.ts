import { InvalidArgumentError } from '../errors';
import type { CallOptions, Logger } from '../options';
import type { Handle } from './handle';

/** Options every holding call takes, whatever the kind. */
export interface HoldOptions {
  /** Longest wait in ms; absent: `acquire` waits as long as it takes, `tryAcquire` makes one attempt. */
  waitTime?: number;
  /** Aborting it ends the wait, rejecting with its `reason`. */
  signal?: AbortSignal;
}

/**
 * The holding surface every held kind shares (single locks, MultiLock and RedLock, both
 * semaphores): code written against it works with any of them. The Java-style verbs (`lock`,
 * `tryLock`, `unlock`, a semaphore's `release`) sit on top of it, kind by kind.
 *
 * @example
 * ```ts
 * import type { Holdable } from 'ioredisson';
 *
 * async function exclusively<T>(what: Holdable, fn: () => Promise<T>): Promise<T> {
 *   return what.using(fn, { waitTime: 10_000 });
 * }
 * await exclusively(redisson.getFairLock('printer'), () => print(doc));
 * await exclusively(redisson.getSemaphore('pool'), () => print(doc));
 * ```
 * @category Handles
 */
export interface Holdable<H extends Handle = Handle> {
  /** What is held: a lock's or semaphore's name, or a composite's `RMultiLock(a, b)`. */
  readonly name: string;
  /**
   * Acquires and resolves a handle; waits as long as it takes unless given a `waitTime`.
   * @throws {LockAcquireTimeoutError} when a given `waitTime` runs out (a RedLock: `QuorumError`).
   */
  acquire(options?: HoldOptions): Promise<H>;
  /** Like `acquire`, but resolves `null` instead of timing out; no `waitTime`: a single attempt. */
  tryAcquire(options?: HoldOptions): Promise<H | null>;
  /**
   * Runs `fn` holding it and releases it afterwards; `fn` gets the handle's `signal`, which aborts if
   * the hold is lost meanwhile.
   * @throws {LockNotHeldError} when the hold was lost before `fn` finished (`fn`'s result is dropped).
   */
  using<T>(fn: (signal: AbortSignal) => Promise<T> | T, options?: HoldOptions): Promise<T>;
}

/** Checks `using()`'s callback before anything is sent. */
export function checkCallback(fn: unknown): void {
  if (typeof fn !== 'function') throw new InvalidArgumentError('using() needs a function');
}

/**
 * Runs `fn` holding `handle` and releases it afterwards (the body of every kind's `using`). `fn`'s
 * error wins over a release error, which is logged; otherwise a release error (the hold was lost)
 * rejects, and `fn`'s result is dropped.
 */
export async function holdWhile<T>(handle: Handle, fn: (signal: AbortSignal) => Promise<T> | T, logger: Logger): Promise<T> {
  let result: T;
  try {
    result = await fn(handle.signal);
  } catch (error) {
    await handle.release().catch((releaseError: unknown) =>
      logger.debug('release after a failed using() callback failed', { name: handle.name, error: releaseError }),
    );
    throw error;
  }
  await handle.release();
  return result;
}

/** `tryLock` and `tryAcquire` make a single attempt unless given a `waitTime`. */
export function withSingleAttemptDefault<C extends Pick<CallOptions, 'waitTime'>>(call: C): C {
  return call.waitTime === undefined ? { ...call, waitTime: 0 } : call;
}
