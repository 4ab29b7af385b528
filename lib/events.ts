import type { LockLostError } from './errors';

/**
 * Identifies one owner's hold on one lock: the part every lock event shares.
 * @example
 * ```ts
 * redisson.on('released', ({ name, owner, fully }) => fully && console.log(`${owner} freed ${name}`));
 * ```
 * @category Events
 */
export interface LockEvent {
  /** The lock's name. */
  name: string;
  /** The owner token `<clientId>:<threadId>`. */
  owner: string;
}

/**
 * How an acquisition went: the figures a metrics hook records, on `acquired` and `acquireFailed`.
 * @example
 * ```ts
 * redisson.on('acquired', ({ name, waitMs, attempts }) => {
 *   if (waitMs > 1_000) console.warn(`${name}: waited ${waitMs} ms over ${attempts} attempts`);
 * });
 * ```
 * @category Events
 */
export interface AcquisitionStats {
  /** Time from the call to its outcome, in ms. */
  waitMs: number;
  /** Acquire attempts sent (1 when the lock was free). */
  attempts: number;
  /** Times a release message (or a local hand-off) woke the waiter. */
  wakeUps: number;
}

/**
 * Events of a {@link RedissonClient}, by name; subscribe with `redisson.on(name, handler)` and stop
 * with `redisson.off(name, handler)`. They double as the metrics hook: each carries the
 * figures a histogram or counter needs (wait time, attempts, wake-ups, hold time, losses), so an
 * OpenTelemetry or Prometheus exporter subscribes to them without this library depending on either.
 * Handlers run synchronously; one that throws does not break the lock call (its error is rethrown
 * asynchronously).
 * @example
 * ```ts
 * const onLost = ({ name, error }: RedissonEvents['lockLost']) => console.error(`lost ${name}`, error);
 * redisson.on('lockLost', onLost);
 * redisson.on('acquireFailed', ({ name, reason, waitMs }) => console.warn(name, reason, waitMs));
 * // later: redisson.off('lockLost', onLost);
 * ```
 * @category Events
 */
export type RedissonEvents = {
  /** A lock was acquired or re-entered. */
  acquired: LockEvent & AcquisitionStats;
  /** An acquisition ended without the lock: its wait ran out, its signal aborted, the client closed, or an error. */
  acquireFailed: LockEvent &
    AcquisitionStats & {
      /** How it ended (`unavailable`: Redis could not be reached or did not answer in time). */
      reason: 'timeout' | 'aborted' | 'closed' | 'unavailable' | 'error';
    };
  /** One hold of a lock was released. */
  released: LockEvent & {
    /** Whether that was the owner's last hold, so the lock is now free. */
    fully: boolean;
    /** Time since this owner's first hold counted now was acquired; `undefined` when this client counted none. */
    heldMs: number | undefined;
  };
  /** A lock held with watchdog renewal was lost; work it guarded since may not have been exclusive. */
  lockLost: LockEvent & {
    /** The error the lock's handles abort with, saying why the lease was lost. */
    error: LockLostError;
  };
  /** The subscriber connection came back; every waiter was woken to re-check. */
  subscriberReconnected: {
    /** Channels subscribed again on the new connection. */
    channels: number;
  };
};
