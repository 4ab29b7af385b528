import type { LockLostError } from './errors';

/**
 * Identifies what an event is about: the part every acquire, release and loss event shares, for
 * every kind (locks, semaphores, the latch, MultiLock and RedLock).
 * @example
 * ```ts
 * redisson.on('released', ({ kind, name, owner, fully }) => fully && console.log(`${owner} freed ${kind} ${name}`));
 * ```
 * @category Events
 */
export interface LockEvent {
  /**
   * The kind's name: `'lock'`, `'fair-lock'`, `'read-lock'`, `'write-lock'`, `'spin-lock'`,
   * `'fenced-lock'`, `'non-reentrant-lock'`, `'non-reentrant-fair-lock'`, `'multi-lock'`,
   * `'faster-multi-lock'`, `'red-lock'`, `'semaphore'`, `'permit-expirable-semaphore'` or
   * `'count-down-latch'`.
   */
  kind: string;
  /** The name of the lock, semaphore or latch; a composite's is `MultiLock(a, b)` or `RedLock(a, b, c)`. */
  name: string;
  /**
   * Who holds (or wanted) it: a lock's owner token `<clientId>:<threadId>` (a write lock's ends in
   * `:write`); an expirable semaphore's permit ids, comma-separated (as `LockLostError.owner`); a
   * composite's first member's owner token. `''` where there is no single holder: a plain
   * semaphore's permits, an acquisition of permits or of a composite that got none, a latch.
   */
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
  /**
   * Acquire attempts sent (1 when the lock was free); a latch's: the checks of the count made while
   * the caller waited; a composite's: rounds over its members.
   */
  attempts: number;
  /**
   * Times a release message (or a local hand-off) woke the waiter; always 0 for a composite, which
   * waits on its members (each member's own events count their wake-ups).
   */
  wakeUps: number;
}

/**
 * Events of a {@link RedissonClient}, by name; subscribe with `redisson.on(name, handler)` and stop
 * with `redisson.off(name, handler)`. They double as the metrics hook: each carries the
 * figures a histogram or counter needs (wait time, attempts, wake-ups, hold time, losses), so an
 * OpenTelemetry or Prometheus exporter subscribes to them without this library depending on either.
 * Every kind emits the same events with the same figures, told apart by `kind`. Handlers run
 * synchronously; one that throws does not break the call (its error is rethrown asynchronously).
 * @example
 * ```ts
 * const onLost = ({ kind, name, error }: RedissonEvents['holdLost']) => console.error(`lost ${kind} ${name}`, error);
 * redisson.on('holdLost', onLost);
 * redisson.on('acquireFailed', ({ kind, name, reason, waitMs }) => console.warn(kind, name, reason, waitMs));
 * // later: redisson.off('holdLost', onLost);
 * ```
 * @category Events
 */
export type RedissonEvents = {
  /**
   * An acquisition got what it waited for: a lock acquired or re-entered, permits taken, all (a
   * RedLock: a majority) of a composite's members held, or a latch's `await()` found it open. One
   * that lands after its caller aborted (or the client closed) is `acquireFailed` instead.
   */
  acquired: LockEvent & AcquisitionStats;
  /**
   * An acquisition ended without it: its wait ran out (a latch's `await()` resolving `false`, a
   * RedLock without a valid majority: `timeout` too), its signal aborted, the client closed, or an
   * error.
   */
  acquireFailed: LockEvent &
    AcquisitionStats & {
      /**
       * How it ended (`unavailable`: Redis could not be reached or did not answer in time;
       * `deadlock`: it was the wait of a deadlock that gave up, see `deadlockDetection`).
       */
      reason: 'timeout' | 'aborted' | 'closed' | 'unavailable' | 'deadlock' | 'error';
    };
  /**
   * One hold was released: a lock's hold, a handle's permits (or a `release` of permits), a
   * composite's hold on its members. A latch holds nothing, so never emits it.
   */
  released: LockEvent & {
    /**
     * Whether that was the owner's last hold, so the lock is now free; always `true` for permits and
     * composites (a composite's members say on their own events whether they are now free).
     */
    fully: boolean;
    /**
     * Time since this owner's first hold counted now was acquired (permits, a composite: since that
     * handle's acquisition); `undefined` when this client did not count it (e.g. `release(n)` of a
     * plain semaphore, a composite's `unlock()`).
     */
    heldMs: number | undefined;
  };
  /**
   * A hold of any kind was lost: a lock's or expirable permits' lease (renewal found it gone, its
   * term ended while held, or the client shut down holding it), or a composite handle's hold (a
   * MultiLock: a member lost; a RedLock: below the majority, or out of validity). Work it guarded
   * since may not have been exclusive.
   */
  holdLost: LockEvent & {
    /** The error the hold's handles abort with, saying why it was lost. */
    error: LockLostError;
  };
  /**
   * @deprecated Renamed `holdLost`, emitted alongside it with the same event; this name goes in 1.0.
   */
  lockLost: LockEvent & {
    /** The error the hold's handles abort with, saying why it was lost. */
    error: LockLostError;
  };
  /**
   * A lock listener was added, but the server's `notify-keyspace-events` setting leaves its event
   * out, so it will not be called until the setting is changed. Emitted once per client and event;
   * not at all when `CONFIG GET` is refused (ACL, managed services): the logger is told instead.
   */
  keyspaceNotificationsOff: {
    /** The event left out. */
    event: 'expired' | 'deleted';
    /** The setting as read. */
    setting: string;
    /** The flags it needs (`Ex` or `Eg`; `A` covers both `x` and `g`). */
    needs: string;
  };
  /** The subscriber connection came back; every waiter was woken to re-check. */
  subscriberReconnected: {
    /** Channels subscribed again on the new connection. */
    channels: number;
  };
};
