import { InvalidArgumentError } from '../errors';
import { MAX_TIME_MS, checkInteger, checkOptionKeys } from '../options';

/**
 * Largest permit count or latch count accepted: Java's `int` maximum, as in Redisson (2^31-1).
 * @example
 * ```ts
 * await redisson.getSemaphore('unbounded').trySetPermits(MAX_PERMITS);
 * ```
 * @category Synchronizers
 */
export const MAX_PERMITS = 2 ** 31 - 1;

/**
 * Options of a semaphore's `acquire()` and `tryAcquire()`.
 * @example
 * ```ts
 * const handle = await semaphore.acquire({ waitTime: 5_000, signal: request.signal });
 * ```
 * @category Options
 */
export interface SemaphoreAcquireOptions {
  /**
   * Longest time in ms to wait for the permits. `acquire` waits as long as it takes without it;
   * `tryAcquire` makes a single attempt.
   * @default no limit in `acquire()` and `using()`; a single attempt in `tryAcquire()`
   */
  waitTime?: number;
  /**
   * Aborts the wait; the call then rejects with `signal.reason`.
   * @default none
   */
  signal?: AbortSignal;
}

/**
 * Options of `RSemaphore.using()`.
 * @example
 * ```ts
 * await semaphore.using(() => bulkLoad(), { permits: 3, waitTime: 10_000 });
 * ```
 * @category Options
 */
export interface SemaphoreUsingOptions extends SemaphoreAcquireOptions {
  /**
   * Permits to hold while the callback runs.
   * @default 1
   */
  permits?: number;
}

/**
 * Options of a permit-expirable semaphore's `acquire()` and `tryAcquire()`.
 * @example
 * ```ts
 * const permit = await redisson.getPermitExpirableSemaphore('slots').acquire({ leaseTime: 30_000 });
 * ```
 * @category Options
 */
export interface ExpirableAcquireOptions extends SemaphoreAcquireOptions {
  /**
   * Lease in ms after which Redis takes the permits back by itself. Without it (and without
   * `watchdog`) the permits never expire, as in Redisson.
   * @default no expiry
   */
  leaseTime?: number;
  /**
   * Beyond Redisson: lease the permits for `lockWatchdogTimeout` and renew them every third of it
   * while the client lives, so a crashed holder's permits come back within one lease. Cannot be
   * combined with `leaseTime`.
   * @default false
   */
  watchdog?: boolean;
}

/**
 * Options of `RPermitExpirableSemaphore.using()`.
 * @example
 * ```ts
 * await redisson.getPermitExpirableSemaphore('slots').using(() => work(), { permits: 2, watchdog: true });
 * ```
 * @category Options
 */
export interface ExpirableUsingOptions extends ExpirableAcquireOptions {
  /**
   * Permits to hold while the callback runs.
   * @default 1
   */
  permits?: number;
}

/**
 * Options of `RSemaphore.trySetPermits()`.
 * @example
 * ```ts
 * await redisson.getSemaphore('daily-quota').trySetPermits(1_000, { ttl: 86_400_000 });
 * ```
 * @category Options
 */
export interface TrySetPermitsOptions {
  /**
   * Time-to-live in ms of the semaphore key; without it the key never expires.
   * @default no expiry
   */
  ttl?: number;
}

/**
 * Options of `RCountDownLatch.await()`.
 * @example
 * ```ts
 * const open = await redisson.getCountDownLatch('ready').await({ waitTime: 30_000 });
 * ```
 * @category Options
 */
export interface LatchAwaitOptions {
  /**
   * Longest time in ms to wait for the count to reach zero; without it, as long as it takes.
   * @default no limit
   */
  waitTime?: number;
  /**
   * Aborts the wait; the call then rejects with `signal.reason`.
   * @default none
   */
  signal?: AbortSignal;
}

/** The validated form of any of these options. */
export interface SyncCall {
  waitTime: number | undefined;
  leaseTime: number | undefined;
  watchdog: boolean;
  signal: AbortSignal | undefined;
  permits: number | undefined;
  ttl: number | undefined;
}

export type SyncKey = 'waitTime' | 'leaseTime' | 'watchdog' | 'signal' | 'permits' | 'ttl';

/** A call without options (shared: a call never changes its options). */
const NO_OPTIONS: SyncCall = Object.freeze({
  waitTime: undefined,
  leaseTime: undefined,
  watchdog: false,
  signal: undefined,
  permits: undefined,
  ttl: undefined,
});

/** Validates the options of one synchronizer call; `allowed` lists the keys it accepts. */
export function resolveSyncOptions(options: unknown, allowed: readonly SyncKey[], what: string): SyncCall {
  if (options === undefined) return NO_OPTIONS;
  const given = checkOptionKeys(options, allowed, `${what} options`) as Partial<Record<SyncKey, unknown>>;
  const { waitTime, leaseTime, watchdog, signal, permits, ttl } = given;
  if (waitTime !== undefined) checkInteger('waitTime', waitTime, 0, MAX_TIME_MS, ' ms');
  if (leaseTime !== undefined) checkInteger('leaseTime', leaseTime, 1, MAX_TIME_MS, ' ms');
  if (ttl !== undefined) checkInteger('ttl', ttl, 1, MAX_TIME_MS, ' ms');
  if (watchdog !== undefined && typeof watchdog !== 'boolean')
    throw new InvalidArgumentError('watchdog must be a boolean');
  if (watchdog === true && leaseTime !== undefined) {
    throw new InvalidArgumentError(
      'watchdog and leaseTime exclude each other: a watchdog permit is leased for lockWatchdogTimeout',
    );
  }
  if (signal !== undefined && !(signal instanceof AbortSignal))
    throw new InvalidArgumentError('signal must be an AbortSignal');
  if (permits !== undefined) checkPermits(permits, 'permits', 0);
  return {
    waitTime: waitTime as number | undefined,
    leaseTime: leaseTime as number | undefined,
    watchdog: watchdog === true,
    signal,
    permits,
    ttl: ttl as number | undefined,
  };
}

/** Throws unless `value` is an integer from `min` to {@link MAX_PERMITS}. */
export function checkPermits(value: unknown, what: string, min: number): asserts value is number {
  checkInteger(what, value, min, MAX_PERMITS);
}

/** Throws unless `value` is an integer from -{@link MAX_PERMITS} to {@link MAX_PERMITS}. */
export function checkDelta(value: unknown, what: string): asserts value is number {
  checkInteger(what, value, -MAX_PERMITS, MAX_PERMITS);
}

/** Splits `acquire(permits?, options?)` / `acquire(options?)` into permits and options. */
export function splitPermits(first: unknown, second: unknown, fallback: number): [unknown, unknown] {
  if (first === undefined || typeof first === 'number') return [first ?? fallback, second];
  if (second !== undefined) throw new InvalidArgumentError('permits must be a number');
  return [fallback, first];
}
