/** Machine-readable codes carried by every {@link RedissonError}. */
export type RedissonErrorCode =
  | 'ERR_INVALID_ARGUMENT'
  | 'ERR_LOCK_NOT_HELD'
  | 'ERR_LOCK_ACQUIRE_TIMEOUT'
  | 'ERR_LOCK_LOST'
  | 'ERR_CLIENT_CLOSED'
  | 'ERR_REPLICA_SYNC';

/** Base class of every error this library throws; `code` tells them apart without `instanceof`. */
export abstract class RedissonError extends Error {
  /** Stable machine-readable code. */
  abstract readonly code: RedissonErrorCode;

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Bad input, thrown before anything is sent to Redis. */
export class InvalidArgumentError extends RedissonError {
  readonly code = 'ERR_INVALID_ARGUMENT';
}

/**
 * The caller does not hold the lock it tried to release: it never held it, already released it,
 * or its lease expired. Redisson's `IllegalMonitorStateException`.
 */
export class LockNotHeldError extends RedissonError {
  readonly code = 'ERR_LOCK_NOT_HELD';

  constructor(
    message: string,
    /** The lock's name. */
    readonly lockName: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** An acquire with a `waitTime` ran out of time before the lock became free. */
export class LockAcquireTimeoutError extends RedissonError {
  readonly code = 'ERR_LOCK_ACQUIRE_TIMEOUT';

  constructor(
    /** The lock's name. */
    readonly lockName: string,
    /** The wait that ran out, in ms. */
    readonly waitTime: number,
  ) {
    super(`Could not acquire lock '${lockName}' within ${waitTime} ms`);
  }
}

/**
 * A held lock was lost: its lease could not be renewed (the key is gone or owned by someone else),
 * its explicit lease ran out, or renewal was impossible for longer than the lease. Work guarded by
 * the lock after this point is not exclusive.
 */
export class LockLostError extends RedissonError {
  readonly code = 'ERR_LOCK_LOST';

  constructor(
    message: string,
    /** The lock's name. */
    readonly lockName: string,
    /** The owner token `<clientId>:<threadId>` that held it. */
    readonly owner: string,
  ) {
    super(message);
  }
}

/** The client was shut down; it accepts no more work. */
export class ClientClosedError extends RedissonError {
  readonly code = 'ERR_CLIENT_CLOSED';

  constructor() {
    super('The RedissonClient has been shut down');
  }
}

/**
 * No replica acknowledged a lock write within `replicaSync.timeout`, in every round tried (Redisson's
 * `NoSyncedSlavesException`). An acquisition was undone each time, so the caller does not hold the
 * lock; an unlock or renewal did reach the primary, whose state stands, but a failover now could
 * lose it.
 */
export class ReplicaSyncError extends RedissonError {
  readonly code = 'ERR_REPLICA_SYNC';

  constructor(
    /** The script whose write no replica acknowledged, e.g. `lock/acquire`. */
    readonly script: string,
    /** The first key of the write (its cluster slot's primary took it). */
    readonly key: string,
    /** Replicas waited for in the last round. */
    readonly replicas: number,
    /** Rounds tried. */
    readonly rounds: number,
    timeout: number,
  ) {
    super(
      `None of ${replicas} replica(s) acknowledged ${script} on '${key}' within ${timeout} ms, in ${rounds} round(s). ` +
        'Raise replicaSync.timeout, check the replicas, or set replicaSync.enabled = false.',
    );
  }
}
