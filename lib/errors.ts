/**
 * Machine-readable codes carried by every {@link RedissonError}: one per error class, stable across
 * releases, so they can be matched where `instanceof` is unreliable (two copies of the package).
 * @example
 * ```ts
 * const retryable: RedissonErrorCode[] = ['ERR_LOCK_ACQUIRE_TIMEOUT', 'ERR_QUORUM', 'ERR_REPLICA_SYNC'];
 * const retry = (error: unknown) => error instanceof RedissonError && retryable.includes(error.code);
 * ```
 * @category Errors
 */
export type RedissonErrorCode =
  | 'ERR_INVALID_ARGUMENT'
  | 'ERR_LOCK_NOT_HELD'
  | 'ERR_LOCK_ACQUIRE_TIMEOUT'
  | 'ERR_LOCK_LOST'
  | 'ERR_LOCK_REENTRY'
  | 'ERR_QUORUM'
  | 'ERR_CLIENT_CLOSED'
  | 'ERR_REPLICA_SYNC'
  | 'ERR_REDIS_UNAVAILABLE'
  | 'ERR_AOF_SYNC_UNAVAILABLE'
  | 'ERR_DEADLOCK';

/**
 * Base class of every error this library throws; `code` tells them apart without `instanceof`.
 * Aborts (`signal.reason`) and errors of the Redis connection itself are passed through as they are.
 * @example
 * ```ts
 * try {
 *   await redisson.getLock('job').using(() => runJob(), { waitTime: 1_000 });
 * } catch (error) {
 *   if (error instanceof RedissonError) console.warn(`${error.code}: ${error.message}`);
 *   else throw error;
 * }
 * ```
 * @category Errors
 */
export abstract class RedissonError extends Error {
  /** Stable machine-readable code. */
  abstract readonly code: RedissonErrorCode;

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * Bad input (a name, a count, an option), thrown or rejected with before anything is sent to Redis.
 * A programming error: fix the call rather than retry it.
 * @example
 * ```ts
 * try {
 *   await redisson.getLock('job').tryLock({ waitTime: -1 });
 * } catch (error) {
 *   if (error instanceof InvalidArgumentError) console.error(error.message); // waitTime must be an integer ...
 * }
 * ```
 * @category Errors
 */
export class InvalidArgumentError extends RedissonError {
  readonly code = 'ERR_INVALID_ARGUMENT';
}

/**
 * The caller does not hold the lock it tried to release: it never held it, already released it,
 * or its lease expired. Redisson's `IllegalMonitorStateException`. Also what a handle's
 * `release()` rejects with when the hold was lost meanwhile, and what `using()` rejects with then.
 * @example
 * ```ts
 * await lock.unlock().catch((error: unknown) => {
 *   if (!(error instanceof LockNotHeldError)) throw error;
 *   console.warn(`'${error.lockName}' was no longer ours: the work may not have been exclusive`);
 * });
 * ```
 * @category Errors
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

/**
 * An acquire with a `waitTime` ran out of time before the lock (or the semaphore's permits) became
 * free. `tryLock()` and `tryAcquire()` resolve `false` / `null` instead.
 * @example
 * ```ts
 * try {
 *   await redisson.getLock('report').using(() => buildReport(), { waitTime: 2_000 });
 * } catch (error) {
 *   if (error instanceof LockAcquireTimeoutError) console.log(`busy for over ${error.waitTime} ms`);
 * }
 * ```
 * @category Errors
 */
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
 * the lock after this point is not exclusive. It is the reason a handle's `signal` aborts with, and
 * the `error` of the `holdLost` event.
 * @example
 * ```ts
 * const handle = await lock.acquire();
 * try {
 *   handle.signal.throwIfAborted(); // throws the LockLostError once the lease is lost
 * } catch (error) {
 *   if (error instanceof LockLostError) console.warn(`${error.lockName} lost by ${error.owner}`);
 * }
 * ```
 * @category Errors
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

/**
 * A non-reentrant lock was asked for again by the owner that already holds it. Raised at once, from
 * the acquire script's answer, instead of waiting for itself; the existing hold is kept. Redisson's
 * `IllegalMonitorStateException` for a non-reentrant re-acquire.
 * @example
 * ```ts
 * const lock = redisson.getNonReentrantLock('job');
 * await lock.using(async () => {
 *   const again = await lock.tryLock().catch((error: unknown) => error instanceof RedissonError && error.code);
 *   console.log(again); // 'ERR_LOCK_REENTRY'
 * });
 * ```
 * @category Errors
 */
export class LockReentryError extends RedissonError {
  readonly code = 'ERR_LOCK_REENTRY';

  constructor(
    /** The lock's name. */
    readonly lockName: string,
    /** The owner token `<clientId>:<threadId>` that holds it and asked again. */
    readonly owner: string,
  ) {
    super(`Lock '${lockName}' is non-reentrant and is already held by owner ${owner}`);
  }
}

/**
 * The client was shut down; it accepts no more work. Pending waits reject with it, and so does
 * every later call of the client or of the locks it made.
 * @example
 * ```ts
 * await redisson.shutdown();
 * try {
 *   redisson.getLock('job');
 * } catch (error) {
 *   if (error instanceof ClientClosedError) console.log('make a new RedissonClient');
 * }
 * ```
 * @category Errors
 */
export class ClientClosedError extends RedissonError {
  readonly code = 'ERR_CLIENT_CLOSED';

  constructor() {
    super('The RedissonClient has been shut down');
  }
}

/**
 * What one member of a RedLock (or MultiLock) acquisition came to, in {@link QuorumError.outcomes}:
 * - `acquired`: it was taken (and, as the acquisition failed, given back);
 * - `held`: another owner holds it; `ttl` is its remaining lease in ms as last seen (-1: no expiry);
 * - `unreachable`: the member's server answered with an error or could not be reached; `error` says why;
 * - `timed-out`: no reply came within the member's bound (its wait plus the reply bound).
 * @category Errors
 */
export type MemberOutcome =
  | {
      /** The member lock's name. */
      readonly name: string;
      /** The member was taken (and, as the acquisition failed, given back). */
      readonly status: 'acquired';
    }
  | {
      /** The member lock's name. */
      readonly name: string;
      /** Another owner holds the member. */
      readonly status: 'held';
      /** The holder's remaining lease in ms as last seen (-1: no expiry). */
      readonly ttl: number;
    }
  | {
      /** The member lock's name. */
      readonly name: string;
      /** The member's server answered with an error or could not be reached. */
      readonly status: 'unreachable';
      /** What the call to it failed with. */
      readonly error: unknown;
    }
  | {
      /** The member lock's name. */
      readonly name: string;
      /** No reply came within the member's bound (its wait plus the reply bound). */
      readonly status: 'timed-out';
    };

/**
 * A RedLock could not take a majority of its members (or took one too late to be valid) before its
 * wait ran out. `outcomes` has one entry per member, in the order the members were given, so a caller
 * can tell contention (`held`) from an outage (`unreachable`, `timed-out`).
 * @example
 * ```ts
 * try {
 *   await redLock.acquire({ waitTime: 1_000 });
 * } catch (error) {
 *   if (!(error instanceof QuorumError)) throw error;
 *   console.warn(`${error.acquired} of ${error.quorum} needed`, error.outcomes.map((o) => `${o.name}: ${o.status}`));
 * }
 * ```
 * @category Errors
 */
export class QuorumError extends RedissonError {
  readonly code = 'ERR_QUORUM';

  constructor(
    /** The RedLock's name. */
    readonly lockName: string,
    /** Members needed: N/2 + 1 (integer division). */
    readonly quorum: number,
    /** What each member came to in the last round, in the order the members were given. */
    readonly outcomes: readonly MemberOutcome[],
    /** Why the last round failed: too few members taken, or taken but with no validity left. */
    readonly reason: 'no-quorum' | 'no-validity' = 'no-quorum',
  ) {
    const counts = new Map<string, number>();
    for (const outcome of outcomes) counts.set(outcome.status, (counts.get(outcome.status) ?? 0) + 1);
    const summary = [...counts].map(([status, n]) => `${n} ${status}`).join(', ');
    super(
      reason === 'no-quorum'
        ? `RedLock '${lockName}' needs ${quorum} of ${outcomes.length} members and got fewer (${summary})`
        : `RedLock '${lockName}' took ${quorum} or more of ${outcomes.length} members, but too late: no validity was left (${summary})`,
    );
  }

  /** How many members were taken in the last round. */
  get acquired(): number {
    return this.outcomes.filter((outcome) => outcome.status === 'acquired').length;
  }
}

/**
 * No replica acknowledged a write within `replicaSync.timeout`, in every round tried (Redisson's
 * `NoSyncedSlavesException`); with `replicaSync.aof`, the primary's AOF fsync or every replica's was
 * missing (see `aof`). An acquisition (of a lock or of permits) was undone each time, so the
 * caller holds nothing; any other write (an unlock, a renewal, a force-unlock, a permit release, a
 * count-down) did reach the primary, whose state stands, but a failover now could lose it.
 * @example
 * ```ts
 * await lock.lock().catch((error: unknown) => {
 *   if (!(error instanceof ReplicaSyncError)) throw error;
 *   console.error(`${error.script} on '${error.key}': none of ${error.replicas} replica(s) acknowledged`);
 * });
 * ```
 * @category Errors
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
    /**
     * With `replicaSync.aof`: what the last `WAITAOF` found; whether the primary fsynced the write
     * to its AOF, and how many replicas did (`replicas` counts those waited for). Absent for a `WAIT`.
     */
    readonly aof?: {
      /** Whether the primary fsynced the write. */
      readonly local: boolean;
      /** Replicas that fsynced it. */
      readonly acked: number;
    },
  ) {
    super(
      aof
        ? `${script} on '${key}' was not confirmed in an AOF within ${timeout} ms, in ${rounds} round(s): the primary ` +
            `${aof.local ? 'fsynced it' : 'did not fsync it'}, ${aof.acked} of ${replicas} replica(s) did. ` +
            'Raise replicaSync.timeout (appendfsync everysec fsyncs once a second), check appendonly on the replicas, ' +
            'or set replicaSync.aof = false.'
        : `None of ${replicas} replica(s) acknowledged ${script} on '${key}' within ${timeout} ms, in ${rounds} round(s). ` +
            'Raise replicaSync.timeout, check the replicas, or set replicaSync.enabled = false.',
    );
  }
}

/**
 * `replicaSync.aof` is on but the primary that took a write cannot confirm it on disk: the server has
 * no `WAITAOF` (Redis before 7.2), runs without `appendonly yes`, or refuses the command to this user.
 * The call fails at once, with the server's answer as `cause`: an acquisition (of a lock or of permits)
 * was undone first, so the caller holds nothing; any other write (an unlock, a renewal, a release, a
 * count-down) did reach the primary and stands. Not retried: a server setting, not a passing fault.
 * @example
 * ```ts
 * await lock.lock().catch((error: unknown) => {
 *   if (error instanceof AofSyncUnavailableError) console.error(`turn appendonly on for '${error.key}':`, error.cause);
 *   throw error;
 * });
 * ```
 * @category Errors
 */
export class AofSyncUnavailableError extends RedissonError {
  readonly code = 'ERR_AOF_SYNC_UNAVAILABLE';

  constructor(
    /** The script whose write could not be confirmed, e.g. `lock/acquire`. */
    readonly script: string,
    /** The first key of the write (its cluster slot's primary took it). */
    readonly key: string,
    /** The server's reply to `WAITAOF`. */
    cause: Error,
  ) {
    super(
      `replicaSync.aof needs WAITAOF (Redis 7.2+, Valkey 8+) with appendonly yes on the primary of '${key}', which answered ` +
        `${script}'s WAITAOF with: ${cause.message}. Turn appendonly on there, or set replicaSync.aof = false.`,
      { cause },
    );
  }
}

/**
 * Redis could not be reached, or did not answer, within what the call allowed: one rule for every
 * kind. An acquire-like call with a `waitTime` (`tryLock`, `tryAcquire`, `acquire`, `using`, a
 * latch's `await`) rejects with it at most `replyGrace` ms after its wait ran out when its last
 * attempt failed in transit or got no reply; `tryLock` and `tryAcquire` reject too rather than
 * resolve `false` / `null`, which mean "held by someone else". A release or unlock rejects with it
 * when its reply is lost; the handle's `signal` then aborts once the lease can no longer be
 * confirmed. `cause` is the transport error ioredis gave, if any (none when no reply came).
 * Anything an attempt may have taken after the caller gave up is taken back once Redis answers.
 * @example
 * ```ts
 * try {
 *   await redisson.getLock('job').using(() => runJob(), { waitTime: 1_000 });
 * } catch (error) {
 *   if (error instanceof RedisUnavailableError) return reply503('try again later', error.cause);
 *   throw error;
 * }
 * ```
 * @category Errors
 */
export class RedisUnavailableError extends RedissonError {
  readonly code = 'ERR_REDIS_UNAVAILABLE';

  constructor(
    /** The name of the lock, semaphore or latch the call was for. */
    readonly lockName: string,
    /** What the call was doing, e.g. `acquire` or `release`. */
    readonly operation: string,
    /** The call's wait in ms; `undefined` when it had none. */
    readonly waitTime: number | undefined,
    cause?: unknown,
  ) {
    const wait = waitTime === undefined ? '' : ` within its wait of ${waitTime} ms`;
    const why = cause instanceof Error ? `: ${cause.message}` : ': no reply came';
    super(`Redis could not be reached for the ${operation} of '${lockName}'${wait}${why}`, cause === undefined ? undefined : { cause });
  }
}

/**
 * One wait of a deadlock cycle ({@link DeadlockError.cycle}): an owner parked on a lock held by the
 * next wait's owner (the last wait's lock: by the first's), with what its client recorded.
 * @category Errors
 */
export interface DeadlockWait {
  /** The waiting owner, `<clientId>:<threadId>`. */
  readonly owner: string;
  /** The lock it waits for. */
  readonly lockName: string;
  /** When its wait began (ISO 8601, its client's clock). */
  readonly since: string;
  /** Its client's `ownerInfo.service`; absent when the client recorded none. */
  readonly service?: string;
  /** Its client's host name. */
  readonly host?: string;
  /** Its client's process id. */
  readonly pid?: number;
  /** Its owner scope's label (`redisson.run(fn, { label })`), if it has one. */
  readonly label?: string;
}

/**
 * The wait was a link of a deadlock (option `deadlockDetection`): owners across clients that each
 * hold what the next waits for, listed in `cycle`, the first being this wait. Of every cycle one wait
 * gives up, the youngest (the latest `since`), so that the others go on; nothing it holds is released
 * for it. Waits of clients that record nothing (Java, or detection off) are not seen.
 * @example
 * ```ts
 * try {
 *   await redisson.run(() => transfer(from, to), { label: `transfer ${from} to ${to}` });
 * } catch (error) {
 *   if (!(error instanceof DeadlockError)) throw error;
 *   console.warn(error.message); // who waits for what, around the cycle; retry later
 * }
 * ```
 * @category Errors
 */
export class DeadlockError extends RedissonError {
  readonly code = 'ERR_DEADLOCK';

  constructor(
    /** The lock this wait gave up on. */
    readonly lockName: string,
    /** The cycle, this wait first. */
    readonly cycle: readonly DeadlockWait[],
  ) {
    const links = cycle.map((wait, i) => `${describeOwner(wait)} waits for '${wait.lockName}', held by ${cycle[(i + 1) % cycle.length]!.owner}`);
    super(`Deadlock: ${links.join('; ')}. This wait, the youngest, gives up`);
  }
}

function describeOwner(wait: DeadlockWait): string {
  const who = [wait.service, wait.pid !== undefined && `pid ${wait.pid}`, wait.label && `'${wait.label}'`].filter(Boolean).join(' ');
  return who ? `${wait.owner} (${who})` : wait.owner;
}
