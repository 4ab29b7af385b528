import { InvalidArgumentError } from '../errors';
import { MAX_TIME_MS } from '../options';
import { wakeOne } from '../kernel/pubsub/wake';
import { newRequestId } from './scripts/lock';
import { forceUnlockSpinLock, unlockSpinLock } from './scripts/spin-lock';
import type { BackOff } from '../kernel/acquisition';
import { BaseLock } from '../kernel/lock';
import type { LockKind } from '../kernel/lock-kind';
import type { ClientContext } from '../kernel/context';
import { HASH_LOCK, RLOCK } from './rlock';

/**
 * Redisson's exponential back-off: the first pause is `initialDelay`; each next one is the previous
 * times `multiplier` plus a random jitter of 0 to n-1 ms (n: pauses so far), capped at `maxDelay`.
 * @example
 * ```ts
 * const lock = redisson.getSpinLock('sync', { type: 'exponential', initialDelay: 5, maxDelay: 500 });
 * ```
 * @category Options
 */
export interface ExponentialBackOffOptions {
  /** Selects this back-off. */
  type: 'exponential';
  /**
   * First pause in ms.
   * @default 1
   */
  initialDelay?: number;
  /**
   * Longest pause in ms.
   * @default 128
   */
  maxDelay?: number;
  /**
   * Growth factor of the pause, at least 1.
   * @default 2
   */
  multiplier?: number;
}

/**
 * The same pause between every two attempts.
 * @example
 * ```ts
 * const lock = redisson.getSpinLock('sync', { type: 'constant', delay: 50 });
 * ```
 * @category Options
 */
export interface ConstantBackOffOptions {
  /** Selects this back-off. */
  type: 'constant';
  /**
   * Pause in ms.
   * @default 64
   */
  delay?: number;
}

/**
 * How a {@link RSpinLock} paces its attempts while the lock is busy (Redisson's `LockOptions.BackOff`).
 * Each pause is also cut short by the holder's remaining lease and by the call's `waitTime`.
 * @default { type: 'exponential', initialDelay: 1, maxDelay: 128, multiplier: 2 }
 * @example
 * ```ts
 * const backOff: BackOffOptions = busy ? { type: 'constant', delay: 200 } : { type: 'exponential' };
 * const lock = redisson.getSpinLock('sync', backOff);
 * ```
 * @category Options
 */
export type BackOffOptions = ExponentialBackOffOptions | ConstantBackOffOptions;

/** Redisson's defaults. */
const EXPONENTIAL_DEFAULTS = { initialDelay: 1, maxDelay: 128, multiplier: 2 } as const;
const CONSTANT_DEFAULT_DELAY = 64;
/** A multiplier beyond this reaches any `maxDelay` in one step anyway. */
const MAX_MULTIPLIER = 1_000_000;

/**
 * @internal Checks `options` and makes the pause function: `failures` pauses so far in, the next
 * pause in ms.
 * @throws {InvalidArgumentError} for an unknown type or key, or a bad number.
 */
export function toBackOff(options: BackOffOptions | undefined): BackOff {
  if (options === undefined) return exponentialBackOff(EXPONENTIAL_DEFAULTS);
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new InvalidArgumentError('backOff must be an object such as { type: "exponential" } or { type: "constant" }');
  }
  const given = { ...options } as Record<string, unknown>;
  if (given.type === 'constant') {
    checkKeys(given, ['type', 'delay']);
    const delay = given.delay ?? CONSTANT_DEFAULT_DELAY;
    checkDelay('backOff.delay', delay);
    return () => delay;
  }
  if (given.type === 'exponential') {
    checkKeys(given, ['type', 'initialDelay', 'maxDelay', 'multiplier']);
    const initialDelay = given.initialDelay ?? EXPONENTIAL_DEFAULTS.initialDelay;
    const maxDelay = given.maxDelay ?? EXPONENTIAL_DEFAULTS.maxDelay;
    const multiplier = given.multiplier ?? EXPONENTIAL_DEFAULTS.multiplier;
    checkDelay('backOff.initialDelay', initialDelay);
    checkDelay('backOff.maxDelay', maxDelay);
    if (maxDelay < initialDelay) {
      throw new InvalidArgumentError(`backOff.maxDelay (${maxDelay}) must not be below backOff.initialDelay (${initialDelay})`);
    }
    if (typeof multiplier !== 'number' || !Number.isFinite(multiplier) || multiplier < 1 || multiplier > MAX_MULTIPLIER) {
      throw new InvalidArgumentError(`backOff.multiplier must be a number from 1 to ${MAX_MULTIPLIER}, got ${shown(multiplier)}`);
    }
    return exponentialBackOff({ initialDelay, maxDelay, multiplier });
  }
  throw new InvalidArgumentError(`backOff.type must be 'exponential' or 'constant', got ${JSON.stringify(given.type)}`);
}

/**
 * @internal Redisson's `ExponentialBackOff` as a function of the pauses so far. Redisson keeps the
 * previous pause in the waiter; this replays that recurrence (each step: previous × multiplier plus
 * a random integer below the step number, capped) from the first pause, so every pause has the same
 * bounds and spread as Redisson's without per-waiter state. The replay stops at the cap, so it takes
 * at most a few steps (log of maxDelay / initialDelay for a multiplier of 2).
 */
export function exponentialBackOff({ initialDelay, maxDelay, multiplier }: Required<Omit<ExponentialBackOffOptions, 'type'>>): BackOff {
  return (failures) => {
    let pause = initialDelay;
    for (let step = 1; step <= failures && pause < maxDelay; step++) {
      pause = Math.min(maxDelay, Math.floor(pause * multiplier) + Math.floor(Math.random() * step));
    }
    return pause;
  };
}

function checkKeys(given: Record<string, unknown>, allowed: readonly string[]): void {
  const unknown = Reflect.ownKeys(given).filter((key) => typeof key !== 'string' || !allowed.includes(key));
  if (unknown.length > 0) {
    throw new InvalidArgumentError(`Unknown backOff options: ${unknown.map(String).join(', ')} (allowed: ${allowed.join(', ')})`);
  }
}

function checkDelay(what: string, value: unknown): asserts value is number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_TIME_MS) {
    throw new InvalidArgumentError(`${what} must be an integer from 1 to ${MAX_TIME_MS} ms, got ${shown(value)}`);
  }
}

/** A bad value as shown in an error message; never throws (`String` does for a null-prototype object). */
function shown(value: unknown): string {
  try {
    return typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);
  } catch {
    return `a value of type ${typeof value}`;
  }
}

/**
 * The spin lock's record: RLock's, with no channel (a waiter re-checks on its
 * back-off) and a release that publishes nothing. It shares RLock's ledger: both count the same
 * hash's holds, which the re-send guard relies on.
 */
const SPIN_LOCK: LockKind = {
  ...RLOCK,
  kind: 'spin-lock',
  release: ({ ctx, name }, owner, leaseTime) => unlockSpinLock(ctx.scripts, { name, owner, leaseTime, requestId: newRequestId() }),
  forceRelease: async ({ ctx, name }) => ({ existed: await forceUnlockSpinLock(ctx.scripts, name), lost: [HASH_LOCK] }),
  channel: () => undefined,
  wake: wakeOne,
  handsOffLocally: false,
};

/**
 * A reentrant lock that never uses pub/sub (Redisson's `RSpinLock`): a waiter re-runs the acquire
 * script after each pause of its {@link BackOffOptions}, and a release publishes nothing. It is
 * stored exactly as an {@link RLock} (hash `<name>`, field `<clientId>:<threadId>`, the hold count),
 * so an RLock and a spin lock of one name exclude each other. Use it where pub/sub is unavailable
 * or where many distinct lock names would need too many subscriptions. Get one from
 * `RedissonClient.getSpinLock`.
 *
 * An RLock waiter on the same name is not woken by a spin-lock release; it notices within its
 * holder's remaining lease, as with a Redisson spin lock.
 *
 * @example
 * ```ts
 * const lock = redisson.getSpinLock(`tenant:${id}`); // no subscription per tenant
 * if (await lock.tryLock({ waitTime: 2_000 })) {
 *   try { await rebuild(id); } finally { await lock.unlock(); }
 * }
 * ```
 * @category Locks
 */
export class RSpinLock extends BaseLock {
  /** @internal Use `RedissonClient.getSpinLock`. */
  constructor(ctx: ClientContext, name: string, backOff: BackOff) {
    super(ctx, name, { ...SPIN_LOCK, backOff });
  }
}
