import type { Holdable } from '../kernel/holding';
import { randomFillSync } from 'node:crypto';
import { InvalidArgumentError, LockNotHeldError } from '../errors';
import { semaphoreChannel } from '../keys';
import type { Lease, LeaseKind } from '../kernel/leases/lease';
import { ClientLocal, type ClientContext } from '../kernel/context';
import { emitReleased } from '../kernel/hold-events';
import { MAX_TIME_MS, checkInteger } from '../options';
import {
  addExpirablePermits,
  deleteExpirable,
  permitCounts,
  permitLeaseTime,
  releaseExpirable,
  releaseManyExpirable,
  renewPermits,
  setExpirablePermits,
  tryAcquireExpirable,
  updatePermitExpiry,
} from './scripts/permit-expirable-semaphore';
import { trySetPermits } from './scripts/semaphore';
import {
  checkDelta,
  checkPermits,
  type ExpirableAcquireOptions,
  type ExpirableUsingOptions,
  type SyncCall,
  type SyncKey,
} from './sync-options';
import {
  PERMIT_RECHECK_MS,
  PermitGrant,
  acquireHandle,
  handOffRelease,
  PermitAcquisition,
  tryAcquireHandle,
  usingHandle,
  type PermitHandle,
  type PermitOutcome,
} from './permits';
import { acquireWithWait } from '../kernel/acquisition';

/** What one client knows of its leased permits: the lease kind that renews them, and who holds which id. */
interface PermitBook {
  kind: LeaseKind;
  /** Tracked grants by `<name>\0<id hex>`. */
  byId: Map<string, PermitGrant>;
}

/** One book per client: every permit lease of a client renews in shared batches. */
const BOOK = new ClientLocal<PermitBook>(({ scripts }) => ({
  kind: {
    noun: 'Permit',
    renew: (batch, leaseTime) => renewPermits(scripts, batch as readonly PermitGrant[], leaseTime, Date.now()),
  },
  byId: new Map(),
}));

const PERMIT_ID = /^[0-9a-f]{32}$/i;

/** Random bytes drawn ahead for permit ids: one draw per 256 ids (a draw of 16 costs as much as one of 4 KiB). */
const entropy = Buffer.alloc(4096);
let drawn = entropy.length;

/** A new permit id: 16 random bytes, as Redisson's. */
function newPermitId(): Buffer {
  if (drawn === entropy.length) {
    randomFillSync(entropy);
    drawn = 0;
  }
  drawn += 16;
  return Buffer.from(entropy.subarray(drawn - 16, drawn));
}

/** The kind's name in events. */
const KIND = 'permit-expirable-semaphore';

/** The options of `acquire` and `tryAcquire`. */
const ACQUIRE_KEYS: readonly SyncKey[] = Object.freeze(['waitTime', 'leaseTime', 'watchdog', 'signal']);

/** Parses permit ids given as 32 hex characters into the 16 bytes Redis stores. */
function parseIds(ids: unknown): Buffer[] {
  const list = typeof ids === 'string' ? [ids] : ids;
  if (!Array.isArray(list) || list.length === 0) {
    throw new InvalidArgumentError('permit ids must be a permit id or a non-empty array of them');
  }
  const seen = new Set<string>();
  return list.map((id: unknown) => {
    if (typeof id !== 'string' || !PERMIT_ID.test(id)) {
      throw new InvalidArgumentError(
        `a permit id is 32 hexadecimal characters, got ${JSON.stringify(String(id)).slice(0, 80)}`,
      );
    }
    const hex = id.toLowerCase();
    if (seen.has(hex)) throw new InvalidArgumentError(`permit id ${hex} is given twice`);
    seen.add(hex);
    return Buffer.from(hex, 'hex');
  });
}

/**
 * A distributed semaphore whose permits have ids and, optionally, leases, stored and signalled
 * exactly as Redisson's `RPermitExpirableSemaphore`: a STRING `<name>` of available permits, the
 * ZSET `{name}:timeout` of acquired permit ids (16 raw bytes) scored by expiry (epoch ms, or
 * 922337203685477 for none), and `redisson_sc:{name}`. Expired permits are reclaimed by the next
 * operation that looks. Get one from `RedissonClient.getPermitExpirableSemaphore`.
 *
 * Without `leaseTime` a permit never expires (Redisson's default). Beyond Redisson, `watchdog: true`
 * leases it for `lockWatchdogTimeout` and renews it while the client lives, so a crashed holder's
 * permit comes back within one lease; its handle's `signal` aborts with `LockLostError` if it is
 * lost. Expiry uses this host's wall clock, as Redisson's does: keep the hosts' clocks in sync.
 *
 * @example
 * ```ts
 * const workers = redisson.getPermitExpirableSemaphore('render-workers');
 * await workers.trySetPermits(4);
 * // a crashed holder's permit comes back within one watchdog lease
 * await workers.using((signal) => render(job, { signal }), { watchdog: true, waitTime: 60_000 });
 * ```
 * @category Synchronizers
 */
export class RPermitExpirableSemaphore implements Holdable<PermitHandle> {
  /** @internal Where releases are announced. */
  readonly channel: string;
  /** @internal */
  readonly minPermits = 1;
  /** @internal */
  readonly acquireKeys = ACQUIRE_KEYS;
  /** @internal This client's leased permits. */
  readonly book: PermitBook;

  /** @internal Use `RedissonClient.getPermitExpirableSemaphore`. */
  constructor(
    /** @internal */
    readonly ctx: ClientContext,
    /** The semaphore's name: the key of its available count. */
    readonly name: string,
  ) {
    this.channel = semaphoreChannel(name);
    this.book = ctx.local(BOOK);
  }

  /**
   * Acquires `permits` (default 1), waiting as long as it takes unless `waitTime` is given, and
   * resolves a handle holding their ids (`handle.permitId`, `handle.permitIds`).
   * @throws {LockAcquireTimeoutError} when a given `waitTime` runs out.
   * @throws {InvalidArgumentError} for a count that is not a positive integer up to 2^31-1 or bad options, before anything is sent.
   * @throws {ClientClosedError} when the client shuts down first.
   * @example
   * ```ts
   * const permit = await semaphore.acquire({ leaseTime: 30_000, waitTime: 5_000 });
   * await processBatch(permit.permitId); // Redis takes the permit back after 30 s at the latest
   * await permit.release();
   * ```
   */
  acquire(options?: ExpirableAcquireOptions): Promise<PermitHandle>;
  acquire(permits: number, options?: ExpirableAcquireOptions): Promise<PermitHandle>;
  acquire(first?: number | ExpirableAcquireOptions, second?: ExpirableAcquireOptions): Promise<PermitHandle> {
    return acquireHandle(this, first, second);
  }

  /**
   * Tries to acquire `permits` (default 1), waiting up to `waitTime` ms (default: a single
   * attempt); resolves a handle, or `null` when they could not be had in time.
   * @throws {InvalidArgumentError} for a count that is not a positive integer up to 2^31-1 or bad options, before anything is sent.
   * @throws {ClientClosedError} when the client shuts down first.
   * @example
   * ```ts
   * const permits = await semaphore.tryAcquire(2, { watchdog: true });
   * if (permits === null) return 'busy';
   * console.log(permits.permitIds); // two ids, 32 hex characters each
   * ```
   */
  tryAcquire(options?: ExpirableAcquireOptions): Promise<PermitHandle | null>;
  tryAcquire(permits: number, options?: ExpirableAcquireOptions): Promise<PermitHandle | null>;
  tryAcquire(first?: number | ExpirableAcquireOptions, second?: ExpirableAcquireOptions): Promise<PermitHandle | null> {
    return tryAcquireHandle(this, first, second);
  }

  /**
   * Runs `fn` holding `permits` (default 1) and releases them afterwards. `fn` gets the handle's
   * `signal`, which aborts if leased permits are lost meanwhile.
   * @throws {LockNotHeldError} when the permits were lost before `fn` finished.
   * @throws {LockAcquireTimeoutError} when a given `waitTime` runs out.
   * @throws {InvalidArgumentError} for bad options or a missing function, before anything is sent.
   * @throws {ClientClosedError} when the client shuts down first.
   * @example
   * ```ts
   * await semaphore.using(async (signal) => {
   *   await upload(file, { signal }); // aborted if the permit's lease is lost
   * }, { leaseTime: 60_000 });
   * ```
   */
  using<T>(fn: (signal: AbortSignal) => Promise<T> | T, options?: ExpirableUsingOptions): Promise<T> {
    return usingHandle(this, fn, options);
  }

  /**
   * Releases permits by id (one id, or several: all or none).
   * @throws {LockNotHeldError} when a permit was already released, had expired or never existed
   *   (Redisson throws IllegalArgumentException there).
   * @throws {InvalidArgumentError} for an id that is not 32 hex characters, before anything is sent.
   * @throws {ClientClosedError} after the client's `shutdown()`.
   * @example
   * ```ts
   * const permit = await semaphore.acquire();
   * // ...elsewhere, given only the id:
   * await semaphore.release(permit.permitId!);
   * ```
   */
  async release(ids: string | readonly string[]): Promise<void> {
    if (!(await this.tryRelease(ids))) {
      const list = typeof ids === 'string' ? ids : ids.join(', ');
      throw new LockNotHeldError(
        `Permit(s) ${list} of semaphore '${this.name}' not held: already released, expired, or never acquired`,
        this.name,
      );
    }
  }

  /**
   * Releases permits by id; resolves whether they were held. Several ids are released all or none.
   * An expired permit not yet reclaimed is released too, but resolves `false` (Redisson's rule).
   * @throws {InvalidArgumentError} for an id that is not 32 hex characters, before anything is sent.
   * @throws {ClientClosedError} after the client's `shutdown()`.
   * @example
   * ```ts
   * if (!(await semaphore.tryRelease(permit.permitIds))) console.warn('already expired or released');
   * ```
   */
  async tryRelease(ids: string | readonly string[]): Promise<boolean> {
    const buffers = parseIds(ids);
    this.ctx.lifetime.throwIfAborted();
    const first = this.book.byId.get(this.bookKey(buffers[0]!));
    for (const id of buffers) {
      const grant = this.book.byId.get(this.bookKey(id));
      if (grant) this.forget(grant);
    }
    const now = Date.now();
    const releasing =
      buffers.length === 1
        ? releaseExpirable(this.ctx.scripts, this.name, buffers[0]!, now)
        : releaseManyExpirable(this.ctx.scripts, this.name, buffers, now).then((released) => released > 0);
    const held = await handOffRelease(this.ctx, this.channel, releasing, (reply) => reply);
    if (held) {
      const owner = buffers.map((id) => id.toString('hex')).join(',');
      const heldMs = first ? performance.now() - first.acquiredAt : undefined;
      emitReleased(this.ctx.emit, { kind: KIND, name: this.name, owner }, true, heldMs);
    }
    return held;
  }

  /**
   * Permits available now, after reclaiming expired ones (0 when the semaphore does not exist).
   * @throws {ClientClosedError} after the client's `shutdown()`.
   * @example
   * ```ts
   * console.log(`${await semaphore.availablePermits()} free`);
   * ```
   */
  async availablePermits(): Promise<number> {
    return (await this.counts()).available;
  }

  /**
   * Permits acquired and not expired, after reclaiming expired ones.
   * @throws {ClientClosedError} after the client's `shutdown()`.
   * @example
   * ```ts
   * console.log(`${await semaphore.acquiredPermits()} in use`);
   * ```
   */
  async acquiredPermits(): Promise<number> {
    return (await this.counts()).acquired;
  }

  /**
   * All permits, available and acquired, after reclaiming expired ones (0 when it does not exist).
   * @throws {ClientClosedError} after the client's `shutdown()`.
   * @example
   * ```ts
   * const total = await semaphore.getPermits(); // availablePermits() + acquiredPermits()
   * ```
   */
  async getPermits(): Promise<number> {
    const counts = await this.counts();
    return counts.exists ? counts.available + counts.acquired : 0;
  }

  /**
   * Creates the semaphore with `permits` available unless it exists; resolves whether it did.
   * @throws {InvalidArgumentError} unless `permits` is an integer from 0 to 2^31-1.
   * @throws {ClientClosedError} after the client's `shutdown()`.
   * @example
   * ```ts
   * await semaphore.trySetPermits(4); // false, and nothing changes, if it exists already
   * ```
   */
  async trySetPermits(permits: number): Promise<boolean> {
    checkPermits(permits, 'permits', 0);
    this.ctx.lifetime.throwIfAborted();
    return trySetPermits(this.ctx.scripts, this.name, permits, 0);
  }

  /**
   * Deletes the semaphore and every acquired permit (Redisson's `delete`); resolves whether it
   * existed. Watchdog permits of this client are then reported lost at their next renewal.
   * @throws {ClientClosedError} after the client's `shutdown()`.
   * @example
   * ```ts
   * await semaphore.delete();
   * ```
   */
  async delete(): Promise<boolean> {
    this.ctx.lifetime.throwIfAborted();
    return deleteExpirable(this.ctx.scripts, this.name);
  }

  /**
   * Makes the total (available + acquired) `permits`, creating the semaphore if needed; the
   * available count may go negative while more are acquired.
   * @throws {InvalidArgumentError} unless `permits` is an integer from 0 to 2^31-1.
   * @throws {ClientClosedError} after the client's `shutdown()`.
   * @example
   * ```ts
   * await semaphore.setPermits(8); // 8 in all, however many are acquired now
   * ```
   */
  async setPermits(permits: number): Promise<void> {
    checkPermits(permits, 'permits', 0);
    this.ctx.lifetime.throwIfAborted();
    await setExpirablePermits(this.ctx.scripts, this.name, permits);
  }

  /**
   * Adds `permits` available permits (negative: removes them).
   * @throws {InvalidArgumentError} unless `permits` is an integer within ±(2^31-1).
   * @throws {ClientClosedError} after the client's `shutdown()`.
   * @example
   * ```ts
   * await semaphore.addPermits(2);
   * ```
   */
  async addPermits(permits: number): Promise<void> {
    checkDelta(permits, 'permits');
    this.ctx.lifetime.throwIfAborted();
    await addExpirablePermits(this.ctx.scripts, this.name, permits);
  }

  /**
   * Gives an acquired permit a lease of `leaseTime` ms from now; resolves whether the permit exists.
   * A watchdog permit of this client stops being renewed and keeps this lease.
   * @throws {InvalidArgumentError} for a malformed id or a lease that is not an integer from 1 to 2^31-1 ms.
   * @throws {ClientClosedError} after the client's `shutdown()`.
   * @example
   * ```ts
   * const permit = await semaphore.acquire({ leaseTime: 10_000 });
   * await semaphore.updateLeaseTime(permit.permitId!, 60_000); // needs longer: 60 s from now
   * ```
   */
  async updateLeaseTime(id: string, leaseTime: number): Promise<boolean> {
    const [buffer] = parseIds(id);
    checkInteger('leaseTime', leaseTime, 1, MAX_TIME_MS, ' ms');
    this.ctx.lifetime.throwIfAborted();
    const sentAt = performance.now();
    const now = Date.now();
    const updated = await updatePermitExpiry(this.ctx.scripts, this.name, buffer!, now + leaseTime, now);
    const grant = this.book.byId.get(this.bookKey(buffer!));
    if (updated && grant) this.ctx.leases.track(grant, { sentAt, leaseTime, renew: false });
    return updated;
  }

  /**
   * Ms left on a permit's lease; -1 when it never expires.
   * @throws {LockNotHeldError} when there is no such permit (released, expired or never acquired).
   * @throws {InvalidArgumentError} for a malformed id, before anything is sent.
   * @throws {ClientClosedError} after the client's `shutdown()`.
   * @example
   * ```ts
   * const left = await semaphore.getLeaseTime(permit.permitId!); // -1: never expires
   * ```
   */
  async getLeaseTime(id: string): Promise<number> {
    const [buffer] = parseIds(id);
    this.ctx.lifetime.throwIfAborted();
    const left = await permitLeaseTime(this.ctx.scripts, this.name, buffer!, Date.now());
    if (left === 0) throw new LockNotHeldError(`Permit ${id} of semaphore '${this.name}' does not exist`, this.name);
    return left;
  }

  /** @internal Releases the permits of a handle; rejects with `LockNotHeldError` when any was gone. */
  async releaseHold(_threadId: number, lease: Lease): Promise<void> {
    const { lifetime } = this.ctx;
    if (lifetime.aborted) throw lifetime.reason;
    const grant = lease as PermitGrant;
    // Released permits go first to this client's oldest parked waiter; a release that answers `false`
    // may not have published, so it hands nothing on for sure.
    if (!(await handOffRelease(this.ctx, this.channel, this.releaseGrant(grant), (held) => held))) {
      throw new LockNotHeldError(
        `Permit(s) ${grant.owner} of semaphore '${this.name}' not held: already released, expired or removed`,
        this.name,
      );
    }
    grant.released(this.ctx.emit);
  }

  private async counts() {
    this.ctx.lifetime.throwIfAborted();
    return permitCounts(this.ctx.scripts, this.name, Date.now());
  }

  /** @internal Releases every permit of `grant` still there; resolves whether all of them were held. */
  releaseGrant(grant: PermitGrant): Promise<boolean> {
    this.forget(grant);
    const { scripts } = this.ctx;
    const now = Date.now();
    if (grant.ids.length === 1) return releaseExpirable(scripts, this.name, grant.ids[0]!, now);
    return releaseManyExpirable(scripts, this.name, grant.ids, now).then(async (released) => {
      if (released > 0) return true;
      // Some are gone: give back the rest one by one, so that nothing outlives the handle.
      await Promise.all(grant.ids.map((id) => releaseExpirable(scripts, this.name, id, now)));
      return false;
    });
  }

  /** @internal Counts `grant` among this client's leased permits. */
  remember(grant: PermitGrant): void {
    for (const id of grant.ids) this.book.byId.set(this.bookKey(id), grant);
  }

  /** Stops tracking a grant's lease. */
  private forget(grant: PermitGrant): void {
    this.ctx.leases.untrack(grant);
    for (const id of grant.ids) {
      const key = this.bookKey(id);
      if (this.book.byId.get(key) === grant) this.book.byId.delete(key);
    }
  }

  private bookKey(id: Buffer): string {
    return `${this.name}\u0000${id.toString('hex')}`;
  }

  /** @internal Acquires `permits` as `call` says; see `PermitTaker`. */
  take<T>(permits: number, call: SyncCall, outcome: PermitOutcome<T>): Promise<T> {
    return acquireWithWait(this.ctx, new ExpirableAcquisition(this, permits, call, outcome));
  }
}

/** One acquisition of expirable permits: each attempt asks for them by id, with their lease. */
class ExpirableAcquisition<T> extends PermitAcquisition<T, RPermitExpirableSemaphore> {
  /**
   * The ids of the attempts: a refused attempt adds none, so the next one reuses them; only after
   * an uncertain attempt (taken back, perhaps still in flight) are they new.
   */
  private ids: Buffer[] | undefined;

  // The kind's constants are getters, not fields: a parked waiter keeps this object.
  get kind(): string {
    return KIND;
  }

  protected get joinsReleases(): boolean {
    return false;
  }

  get resendsUncertain(): boolean {
    return true;
  }

  private get leaseTime(): number | undefined {
    return this.call.watchdog ? this.taker.ctx.options.lockWatchdogTimeout : this.call.leaseTime;
  }

  async attempt(): Promise<number | null> {
    const { taker, permits, leaseTime } = this;
    const { ctx, name } = taker;
    const ids = (this.ids ??= Array.from({ length: permits }, newPermitId));
    const sentAt = performance.now();
    const now = Date.now();
    let result;
    try {
      result = await tryAcquireExpirable(
        ctx.scripts,
        name,
        ids,
        leaseTime === undefined ? undefined : now + leaseTime,
        now,
      );
    } catch (error) {
      // The outcome is unknown: take back whatever may have landed (nothing changes if it did not).
      this.ids = undefined;
      releaseManyExpirable(ctx.scripts, name, ids, Date.now()).catch((undoError: unknown) =>
        ctx.logger.debug('undoing an uncertain permit acquisition failed', { name, error: undoError }),
      );
      throw error;
    }
    if (!result.acquired) {
      const { earliestExpiry } = result;
      if (earliestExpiry === undefined) return PERMIT_RECHECK_MS;
      return Math.min(Math.max(earliestExpiry - Date.now(), 1), PERMIT_RECHECK_MS);
    }
    const grant = new PermitGrant(taker.book.kind, KIND, name, permits, ids);
    if (leaseTime !== undefined) {
      ctx.leases.track(grant, { sentAt, leaseTime, renew: this.call.watchdog });
      taker.remember(grant);
    }
    return this.took(grant);
  }

  protected giveBack(grant: PermitGrant): Promise<boolean> {
    return this.taker.releaseGrant(grant);
  }
}
