import type { Holdable } from '../kernel/holding';
import { semaphoreChannel } from '../keys';
import type { Lease, LeaseKind } from '../kernel/leases/lease';
import { ClientLocal, type ClientContext } from '../kernel/context';
import { emitReleased } from '../kernel/hold-events';
import {
  addPermits,
  availablePermits,
  deleteSemaphore,
  drainPermits,
  releaseAndAcquirePermits,
  releasePermits,
  releasePermitsIfExists,
  tryAcquirePermits,
  trySetPermits,
} from './scripts/semaphore';
import {
  checkDelta,
  checkPermits,
  resolveSyncOptions,
  type SemaphoreAcquireOptions,
  type SemaphoreUsingOptions,
  type SyncCall,
  type SyncKey,
  type TrySetPermitsOptions,
} from './sync-options';
import {
  NO_PERMIT_IDS,
  PERMIT_RECHECK_MS,
  PermitGrant,
  acquireHandle,
  passPermits,
  PermitAcquisition,
  tryAcquireHandle,
  usingHandle,
  type PermitHandle,
  type PermitOutcome,
} from './permits';
import { acquireWithWait } from '../kernel/acquisition';

/** Plain permits have no lease: their grants are never tracked, so this is never asked to renew. */
const UNLEASED: LeaseKind = { noun: 'Permit', renew: (batch) => Promise.resolve(batch.map(() => true)) };

/** The kind's name in events. */
const KIND = 'semaphore';

/** The options of `acquire` and `tryAcquire`. */
const ACQUIRE_KEYS: readonly SyncKey[] = Object.freeze(['waitTime', 'signal']);

/**
 * What this client sends to one semaphore in one run of code while it has waiters on its channel, to
 * go out in one script when the run yields (its next microtask): its releases, and its acquire
 * attempts, such as those of the waiters one release message wakes, or those a release of its own
 * woke (see `passPermits`). The script
 * adds the releases first, then serves the attempts in the order they were made, each exactly as an
 * attempt of its own right behind the releases would be.
 */
class PermitBatch {
  /** Permits released. */
  released = 0;
  /** Permits each joined attempt wants, in the order they joined. */
  readonly wanted: number[] = [];
  /** One flag per joined attempt, once the batch's script replied. */
  readonly flags: Promise<boolean[]>;

  constructor(ctx: ClientContext, name: string, sent: () => void) {
    this.flags = new Promise((resolve) =>
      queueMicrotask(() => {
        sent();
        resolve(this.send(ctx, name));
      }),
    );
  }

  private send(ctx: ClientContext, name: string): Promise<boolean[]> {
    const { released, wanted } = this;
    const { scripts, lifetime } = ctx;
    // Shut down since the attempts joined: they were closed already; take nothing for them.
    if (lifetime.aborted || wanted.length === 0) {
      const none = wanted.map(() => false);
      return released > 0 ? releasePermits(scripts, name, released).then(() => none) : Promise.resolve(none);
    }
    return released > 0
      ? releaseAndAcquirePermits(scripts, name, released, wanted)
      : tryAcquirePermits(scripts, name, wanted);
  }
}
/** A client's open batches, by semaphore name. */
const OPEN_BATCHES = new ClientLocal(() => new Map<string, PermitBatch>());

/**
 * The batch open for `name` in this run of code, opened if there is none while this client has
 * waiters on `channel`. Without waiters no attempt or release must join another (nothing is passed,
 * no message wakes anyone here): `undefined`, and the caller sends its script at once.
 */
function openBatch(ctx: ClientContext, name: string, channel: string): PermitBatch | undefined {
  const open = ctx.local(OPEN_BATCHES);
  let batch = open.size === 0 ? undefined : open.get(name);
  if (!batch && ctx.pubsub.hasWaiters(channel)) {
    batch = new PermitBatch(ctx, name, () => open.delete(name));
    open.set(name, batch);
  }
  return batch;
}

/**
 * One acquisition of a plain semaphore's permits. Its attempt goes out with this run's batch if one
 * is open, else at once, and its reply reaches the wait loop in one step.
 */
class SemaphoreAcquisition<T> extends PermitAcquisition<T> {
  // The kind's constants are getters, not fields: a parked waiter keeps this object.
  get kind(): string {
    return KIND;
  }

  protected get joinsReleases(): boolean {
    return true;
  }

  /** Permits without an owner: an attempt whose outcome is unknown cannot be taken back, nor sent twice. */
  get resendsUncertain(): boolean {
    return false;
  }

  attempt(): Promise<number | null> {
    const { ctx, name, channel } = this.taker;
    const batch = openBatch(ctx, name, channel);
    if (!batch) return tryAcquirePermits(ctx.scripts, name, [this.permits], (flags) => this.answer(flags[0]));
    const index = batch.wanted.push(this.permits) - 1;
    return batch.flags.then((flags) => this.answer(flags[index]));
  }

  protected giveBack(grant: PermitGrant): Promise<number> {
    return releasePermits(this.taker.ctx.scripts, grant.name, grant.permits);
  }

  /** What the attempt whose flag is `took` answers the wait loop. */
  private answer(took: boolean | undefined): number | null {
    if (took !== true) return PERMIT_RECHECK_MS;
    return this.took(new PermitGrant(UNLEASED, KIND, this.taker.name, this.permits, NO_PERMIT_IDS));
  }
}

/**
 * A distributed counting semaphore, stored and signalled exactly as Redisson's `RSemaphore`: a
 * STRING `<name>` holding the available permits, and the new count published on
 * `redisson_sc:{name}` whenever permits are added. Get one from `RedissonClient.getSemaphore`.
 *
 * Permits have no owner and no lease: whoever releases adds permits, and permits taken by a
 * process that dies are gone until someone adds them back. Use `RPermitExpirableSemaphore` when a
 * crashed holder's permits must come back.
 *
 * @example
 * ```ts
 * const db = redisson.getSemaphore('db-connections');
 * await db.trySetPermits(10);
 * const rows = await db.using(() => runQuery(sql), { waitTime: 5_000 }); // one of 10 at a time
 * ```
 * @category Synchronizers
 */
export class RSemaphore implements Holdable<PermitHandle> {
  /** @internal Where releases are announced. */
  readonly channel: string;
  /** @internal */
  readonly minPermits = 0;
  /** @internal */
  readonly acquireKeys = ACQUIRE_KEYS;

  /** @internal Use `RedissonClient.getSemaphore`. */
  constructor(
    /** @internal */
    readonly ctx: ClientContext,
    /** The semaphore's name: the key of its count. */
    readonly name: string,
  ) {
    this.channel = semaphoreChannel(name);
  }

  /**
   * Takes `permits` (default 1), waiting as long as it takes unless `waitTime` is given, and
   * resolves a handle that gives them back once. `0` permits resolve at once, without Redis.
   * @throws {LockAcquireTimeoutError} when a given `waitTime` runs out.
   * @throws {InvalidArgumentError} for a negative, fractional or too large count or bad options, before anything is sent.
   * @throws {ClientClosedError} when the client shuts down first.
   * @example
   * ```ts
   * const handle = await semaphore.acquire(2, { waitTime: 10_000 });
   * try {
   *   await copyInTwoStreams();
   * } finally {
   *   await handle.release(); // gives back both permits
   * }
   * ```
   */
  acquire(options?: SemaphoreAcquireOptions): Promise<PermitHandle>;
  acquire(permits: number, options?: SemaphoreAcquireOptions): Promise<PermitHandle>;
  acquire(first?: number | SemaphoreAcquireOptions, second?: SemaphoreAcquireOptions): Promise<PermitHandle> {
    return acquireHandle(this, first, second);
  }

  /**
   * Tries to take `permits` (default 1), waiting up to `waitTime` ms (default: a single attempt);
   * resolves a handle, or `null` when they could not be had in time.
   * @throws {InvalidArgumentError} for a negative, fractional or too large count or bad options, before anything is sent.
   * @throws {ClientClosedError} when the client shuts down first.
   * @example
   * ```ts
   * const handle = await semaphore.tryAcquire();
   * if (handle === null) return 'too many requests';
   * await using _permit = handle; // given back when the block ends
   * ```
   */
  tryAcquire(options?: SemaphoreAcquireOptions): Promise<PermitHandle | null>;
  tryAcquire(permits: number, options?: SemaphoreAcquireOptions): Promise<PermitHandle | null>;
  tryAcquire(first?: number | SemaphoreAcquireOptions, second?: SemaphoreAcquireOptions): Promise<PermitHandle | null> {
    return tryAcquireHandle(this, first, second);
  }

  /**
   * Runs `fn` holding `permits` (default 1) and gives them back afterwards, whatever `fn` does.
   * @throws {LockAcquireTimeoutError} when a given `waitTime` runs out.
   * @throws {InvalidArgumentError} for bad options or a missing function, before anything is sent.
   * @throws {ClientClosedError} when the client shuts down first.
   * @example
   * ```ts
   * const page = await semaphore.using(() => fetchPage(url), { permits: 1, waitTime: 30_000 });
   * ```
   */
  using<T>(fn: (signal: AbortSignal) => Promise<T> | T, options?: SemaphoreUsingOptions): Promise<T> {
    return usingHandle(this, fn, options);
  }

  /**
   * Adds `permits` (default 1) and wakes waiters; allowed without a matching acquisition (no upper
   * bound), as in Redisson. `0` does nothing.
   * @throws {InvalidArgumentError} for a negative, fractional or too large count, before anything is sent.
   * @throws {ClientClosedError} after the client's `shutdown()`.
   * @example
   * ```ts
   * await semaphore.release(3); // three more permits, whoever took them
   * ```
   */
  async release(permits = 1): Promise<void> {
    checkPermits(permits, 'permits', 0);
    this.ctx.lifetime.throwIfAborted();
    if (permits === 0) return;
    await this.releasePermits(permits);
    emitReleased(this.ctx.emit, { kind: KIND, name: this.name, owner: '' }, true, undefined);
  }

  /**
   * Like {@link release}, but only if the semaphore exists; resolves whether it did.
   * @throws {InvalidArgumentError} for a count that is not a positive integer up to 2^31-1.
   * @throws {ClientClosedError} after the client's `shutdown()`.
   * @example
   * ```ts
   * if (!(await semaphore.releaseIfExists())) console.warn('the semaphore was deleted meanwhile');
   * ```
   */
  async releaseIfExists(permits = 1): Promise<boolean> {
    checkPermits(permits, 'permits', 1);
    this.ctx.lifetime.throwIfAborted();
    return releasePermitsIfExists(this.ctx.scripts, this.name, permits);
  }

  /**
   * Permits available now (0 when the semaphore does not exist; negative after `addPermits(-n)`).
   * @throws {ClientClosedError} after the client's `shutdown()`.
   * @example
   * ```ts
   * console.log(`${await semaphore.availablePermits()} permits free`);
   * ```
   */
  async availablePermits(): Promise<number> {
    this.ctx.lifetime.throwIfAborted();
    return availablePermits(this.ctx.scripts, this.name);
  }

  /**
   * Takes every available permit; resolves how many there were. They are not tied to a handle:
   * give them back with {@link release}.
   * @throws {ClientClosedError} after the client's `shutdown()`.
   * @example
   * ```ts
   * const drained = await semaphore.drainPermits(); // maintenance: nobody else gets in
   * await semaphore.release(drained);
   * ```
   */
  async drainPermits(): Promise<number> {
    this.ctx.lifetime.throwIfAborted();
    return drainPermits(this.ctx.scripts, this.name);
  }

  /**
   * Creates the semaphore with `permits` unless it exists (with a key TTL of `ttl` ms if given);
   * resolves whether it did.
   * @throws {InvalidArgumentError} for a negative, fractional or too large count or bad options.
   * @throws {ClientClosedError} after the client's `shutdown()`.
   * @example
   * ```ts
   * await semaphore.trySetPermits(5, { ttl: 86_400_000 }); // only the first caller sets it; gone after a day
   * ```
   */
  async trySetPermits(permits: number, options?: TrySetPermitsOptions): Promise<boolean> {
    checkPermits(permits, 'permits', 0);
    const { ttl } = resolveSyncOptions(options, ['ttl'], 'trySetPermits');
    this.ctx.lifetime.throwIfAborted();
    return trySetPermits(this.ctx.scripts, this.name, permits, ttl ?? 0);
  }

  /**
   * Adds `permits` (negative: removes; the count may go below zero) and wakes waiters. Like
   * Redisson, it rewrites the count, which drops a TTL set by `trySetPermits`.
   * @throws {InvalidArgumentError} unless `permits` is an integer within ±(2^31-1).
   * @throws {ClientClosedError} after the client's `shutdown()`.
   * @example
   * ```ts
   * await semaphore.addPermits(-2); // shrink the pool by two
   * ```
   */
  async addPermits(permits: number): Promise<void> {
    checkDelta(permits, 'permits');
    this.ctx.lifetime.throwIfAborted();
    await addPermits(this.ctx.scripts, this.name, permits);
  }

  /**
   * Deletes the semaphore (Redisson's `delete`); resolves whether it existed. Permits held now are
   * not told: a plain semaphore's permits have no owner.
   * @throws {ClientClosedError} after the client's `shutdown()`.
   * @example
   * ```ts
   * await semaphore.delete(); // the next trySetPermits() sets a fresh count
   * ```
   */
  async delete(): Promise<boolean> {
    this.ctx.lifetime.throwIfAborted();
    return deleteSemaphore(this.ctx.scripts, this.name);
  }

  /** @internal Gives back the permits of a handle. */
  releaseHold(_threadId: number, lease: Lease): Promise<void> {
    const grant = lease as PermitGrant;
    const { lifetime } = this.ctx;
    if (lifetime.aborted) return Promise.reject(lifetime.reason);
    return grant.permits > 0 ? this.releasePermits(grant.permits, grant) : Promise.resolve();
  }

  /**
   * Adds `permits`; with this run's batch if one is open, offered first to this client's parked
   * waiters: those it may serve attempt in the same script, which takes their permits only if the
   * count allows. A handle's `grant` emits `released` once they are back.
   */
  private releasePermits(permits: number, grant?: PermitGrant): Promise<void> {
    const { ctx, name, channel } = this;
    const batch = openBatch(ctx, name, channel);
    if (!batch) return releasePermits(ctx.scripts, name, permits, true, () => grant?.released(ctx.emit));
    batch.released += permits;
    passPermits(ctx, channel, permits);
    return batch.flags.then(() => grant?.released(ctx.emit));
  }

  /** @internal Acquires `permits` as `call` says; see `PermitTaker`. */
  take<T>(permits: number, call: SyncCall, outcome: PermitOutcome<T>): Promise<T> {
    if (permits > 0) return acquireWithWait(this.ctx, new SemaphoreAcquisition(this, permits, call, outcome));
    this.ctx.lifetime.throwIfAborted();
    call.signal?.throwIfAborted();
    return Promise.resolve(outcome(this, new PermitGrant(UNLEASED, KIND, this.name, 0, NO_PERMIT_IDS), call));
  }
}
