import { Lease, type LeaseKind } from '../kernel/leases/lease';
import { fallbackBackOff, type AttemptSource, type BackOff, type WaitRequest } from '../kernel/acquisition';
import { ClientLocal, type ClientContext } from '../kernel/context';
import { LocalHandOff, LocalPass } from '../kernel/hand-off';
import { Handle, type HandleOwner } from '../kernel/handle';
import { wakeCount, type WakePolicy } from '../kernel/pubsub/wake';
import { LockAcquireTimeoutError } from '../errors';
import { checkCallback, holdWhile } from '../kernel/holding';
import { emitReleased, type Emit } from '../kernel/hold-events';
import { checkPermits, resolveSyncOptions, splitPermits, type SyncCall, type SyncKey } from './sync-options';

/**
 * Longest a semaphore waiter parks before it re-checks by itself, in ms. Releases wake waiters by
 * message; this bound only matters when a message was lost or woke a waiter that needed more
 * permits than it announced.
 */
export const PERMIT_RECHECK_MS = 5_000;

/** The ids of permits without ids (a plain semaphore's), shared by all of them. */
export const NO_PERMIT_IDS: readonly Buffer[] = Object.freeze([]);
const NO_HEX_IDS: readonly string[] = Object.freeze([]);

/**
 * Permits held by one acquisition: how many, their ids (permit-expirable semaphore only) and the
 * lease that keeps them, when they have one. A plain semaphore's grant is a lease never tracked.
 */
export class PermitGrant extends Lease {
  /** When the permits were acquired (monotonic ms), for `heldMs`. */
  readonly acquiredAt = performance.now();
  /** The ids in hex (32 lowercase characters each), as the handle shows them. */
  readonly permitIds: readonly string[];

  constructor(
    kind: LeaseKind,
    kindName: string,
    name: string,
    /** Permits held. */
    readonly permits: number,
    /** Their ids as stored in Redis (16 bytes each); {@link NO_PERMIT_IDS} for a plain semaphore. */
    readonly ids: readonly Buffer[],
  ) {
    const permitIds = ids.length === 0 ? NO_HEX_IDS : ids.map((id) => id.toString('hex'));
    super(kind, name, permitIds.length === 0 ? '' : permitIds.join(','), kindName);
    this.permitIds = permitIds;
  }

  /** Emits `released` for these permits, given back now. */
  released(emit: Emit): void {
    if (!emit.heard('released')) return;
    emitReleased(
      emit,
      { kind: this.kindName, name: this.name, owner: this.owner },
      true,
      performance.now() - this.acquiredAt,
    );
  }
}

/**
 * The handle of semaphore permits: a {@link Handle} (same `signal`, `release()`,
 * `[Symbol.asyncDispose]`) that also tells which permits it holds. `release()` gives them back
 * exactly once. Its `signal` aborts with `LockLostError` only for expirable permits with a lease
 * that were lost (expired, reclaimed or removed behind the holder's back).
 *
 * @example
 * ```ts
 * const handle = await redisson.getPermitExpirableSemaphore('slots').acquire(2, { leaseTime: 60_000 });
 * console.log(handle.permits, handle.permitIds); // 2, two ids of 32 hex characters
 * await handle.release();                        // both at once; later calls do nothing
 * ```
 * @category Handles
 */
export class PermitHandle extends Handle {
  /** Permits this handle holds. */
  readonly permits: number;
  /** Ids of the permits (32 lowercase hex characters each); empty for a plain semaphore. */
  readonly permitIds: readonly string[];

  /** @internal Made by the semaphores' `acquire`, `tryAcquire` and `using`. */
  constructor(owner: HandleOwner, grant: PermitGrant) {
    super(owner, 0, grant);
    this.permits = grant.permits;
    this.permitIds = grant.permitIds;
  }

  /**
   * The id of the first permit (Redisson's `acquire()` returns it); `undefined` for a plain semaphore.
   * @example
   * ```ts
   * const left = await semaphore.getLeaseTime(handle.permitId!);
   * ```
   */
  get permitId(): string | undefined {
    return this.permitIds[0];
  }
}

/** What is left of one release by this client while its parked waiters claim their permits from it. */
class ReleasedPermits {
  constructor(public left: number) {}
}

/**
 * Channels of permits without an owner: a message `n` wakes up to `n` local waiters, and a release
 * by this client wakes the parked waiters it may serve, their attempts joined to it (see {@link passPermits}).
 */
const PASS_WAKE: WakePolicy = LocalPass.over(wakeCount);

/**
 * Channels of expirable permits: a message `n` wakes up to `n` local waiters. A release by this
 * client is handed to its oldest parked waiter, whose attempt goes out right behind it; the
 * release's own message then wakes one waiter fewer.
 */
const PERMIT_WAKE: WakePolicy = LocalHandOff.over(wakeCount, (message) => {
  const count = Number(message);
  return Number.isSafeInteger(count) && count > 1 ? String(count - 1) : undefined;
});

/** How many of a client's parked acquisitions wait for how many permits, by channel. */
const WAITING = new ClientLocal(() => new Map<string, Map<number, number>>());

/** Records a parked acquisition wanting `permits` on `channel`; returns what takes it out. */
function parkedDemand(channels: Map<string, Map<number, number>>, channel: string, permits: number): () => void {
  let demand = channels.get(channel);
  if (!demand) channels.set(channel, (demand = new Map<number, number>()));
  demand.set(permits, (demand.get(permits) ?? 0) + 1);
  return () => {
    const left = demand.get(permits)! - 1;
    if (left > 0) demand.set(permits, left);
    else if (demand.delete(permits) && demand.size === 0) channels.delete(channel);
  };
}

/** What a permit acquisition resolves, made from its grant (`undefined`: the wait time ran out). */
export type PermitOutcome<T> = (taker: PermitTaker, grant: PermitGrant | undefined, call: SyncCall) => T;

/**
 * One acquisition of permits: its request to the shared wait loop and its attempts, in one object
 * (a parked waiter keeps it, and what the loop reads is derived on demand). A semaphore kind
 * subclasses it with its attempt and its give-back. Permits that land after the caller gave up (the
 * signal aborted or the client closed) are given back, never kept behind the caller's back.
 */
export abstract class PermitAcquisition<T, K extends PermitTaker = PermitTaker>
  implements WaitRequest<T>, AttemptSource<T>
{
  private abandoned = false;
  private grant: PermitGrant | undefined;

  constructor(
    /** The semaphore. */
    protected readonly taker: K,
    /** Permits asked for. */
    protected readonly permits: number,
    protected readonly call: SyncCall,
    private readonly outcome: PermitOutcome<T>,
  ) {}

  /**
   * One attempt: `null` when it took the permits (their grant passed to {@link took}), else how long
   * to park at most before the next, in ms. A failure rejects (never throws).
   */
  abstract attempt(): Promise<number | null>;

  /** Gives back permits nobody wants any more (acquired after the caller gave up). */
  protected abstract giveBack(grant: PermitGrant): Promise<unknown>;

  /**
   * Whether an attempt goes out in one script with a release this client makes in the same run of
   * code (a plain semaphore's batch), so that a release can wake the parked waiters it may serve
   * (see {@link passPermits}). Without it, a release is handed off instead.
   */
  protected abstract readonly joinsReleases: boolean;

  /** See {@link AttemptSource.resendsUncertain}. */
  abstract readonly resendsUncertain: boolean;

  /** The kind's name, for events. */
  abstract readonly kind: string;

  /*
   * The request, as the wait loop reads it.
   */

  get name(): string {
    return this.taker.name;
  }

  get attempts(): this {
    return this;
  }

  get channel(): string {
    return this.taker.channel;
  }

  get policy(): WakePolicy {
    return this.joinsReleases ? PASS_WAKE : PERMIT_WAKE;
  }

  get backOff(): BackOff {
    return fallbackBackOff;
  }

  get waitTime(): number | undefined {
    return this.call.waitTime;
  }

  get turnBound(): number {
    return PERMIT_RECHECK_MS;
  }

  get signal(): AbortSignal | undefined {
    return this.call.signal;
  }

  /**
   * A newcomer queues behind this client's parked waiters that want no more permits than it does
   * (whatever would serve it serves them), rather than barging past them with an attempt of its own;
   * behind waiters that want more, it tries at once. Read as the acquisition starts.
   */
  get queueFirst(): boolean {
    const demand = this.taker.ctx.local(WAITING).get(this.channel);
    if (demand) for (const wanted of demand.keys()) if (wanted <= this.permits) return true;
    return false;
  }

  /**
   * Records what the acquisition wants once it parks: only one that parks does, so one served by its
   * first attempt touches no shared state (its turn came before any newcomer's).
   */
  get watch(): WaitRequest<T>['watch'] {
    return () => parkedDemand(this.taker.ctx.local(WAITING), this.channel, this.permits);
  }

  /*
   * The attempts.
   */

  /** What an attempt that took `grant` answers the wait loop: acquired (`null`), kept unless the caller gave up meanwhile. */
  protected took(grant: PermitGrant): null {
    if (this.abandoned) void this.giveBackQuietly(grant);
    else this.grant = grant;
    return null;
  }

  abandon(): void {
    this.abandoned = true;
  }

  /** The permit ids once acquired (a plain semaphore's: none), for events. */
  get owner(): string {
    return this.grant?.owner ?? '';
  }

  claim(gift: unknown): boolean {
    if (!this.joinsReleases || !(gift instanceof ReleasedPermits) || gift.left < this.permits) return false;
    gift.left -= this.permits;
    return true;
  }

  conclude(acquired: boolean): T | Promise<T> {
    const { taker, call } = this;
    const grant = acquired ? this.grant : undefined;
    if (!grant) return this.outcome(taker, undefined, call);
    const { lifetime } = taker.ctx;
    const cancelledBy = call.signal?.aborted ? call.signal : lifetime.aborted ? lifetime : undefined;
    if (cancelledBy) {
      return this.giveBackQuietly(grant).then(() => {
        throw cancelledBy.reason;
      });
    }
    return this.outcome(taker, grant, call);
  }

  private giveBackQuietly(grant: PermitGrant): Promise<void> {
    return this.giveBack(grant).then(
      () => undefined,
      (error: unknown) =>
        this.taker.ctx.logger.debug('giving back unwanted permits failed', { name: grant.name, error }),
    );
  }
}

/**
 * Offers `permits` this client is releasing to its waiters parked on `channel`, oldest first, for as
 * long as the oldest wants no more than are left. Those that claim them attempt at once, and their
 * attempts must join the release in one script, which gives the permits back and takes theirs in
 * one step: Redis alone decides whether the count covers them, whatever another client changed.
 */
export function passPermits(ctx: ClientContext, channel: string, permits: number): void {
  const strategy = ctx.pubsub.strategyOf(channel);
  if (strategy instanceof LocalPass) strategy.pass(new ReleasedPermits(permits));
}

/**
 * Hands a release just sent (`releasing`, whose reply says whether it published) to this client's
 * oldest waiter parked on `channel`: its attempt follows the release on the same connection.
 */
export function handOffRelease<R>(
  ctx: ClientContext,
  channel: string,
  releasing: Promise<R>,
  published: (reply: R) => boolean,
): Promise<R> {
  const strategy = ctx.pubsub.strategyOf(channel);
  const handOff = strategy instanceof LocalHandOff ? strategy.handOff() : undefined;
  if (!handOff) return releasing;
  return releasing.then(
    (reply) => {
      handOff.unlocked(published(reply));
      return reply;
    },
    (error: unknown) => {
      handOff.unlocked(false);
      throw error;
    },
  );
}

/** @internal A semaphore kind, as its shared `acquire`, `tryAcquire` and `using` drive it. */
export interface PermitTaker extends HandleOwner {
  /** The context of the client it belongs to. */
  readonly ctx: ClientContext;
  /** The channel its releases are announced on. */
  readonly channel: string;
  /** The smallest permit count an acquisition may ask for. */
  readonly minPermits: number;
  /** The options its acquisitions take (besides `permits` for `using`). */
  readonly acquireKeys: readonly SyncKey[];
  /** Acquires `permits` as `call` says, resolving what `outcome` makes of the grant (`undefined`: out of time). */
  take<T>(permits: number, call: SyncCall, outcome: PermitOutcome<T>): Promise<T>;
}

const toHandle: PermitOutcome<PermitHandle> = (taker, grant, call) => {
  if (!grant) throw new LockAcquireTimeoutError(taker.name, call.waitTime ?? 0);
  return new PermitHandle(taker, grant);
};

const toHandleOrNull: PermitOutcome<PermitHandle | null> = (taker, grant) =>
  grant ? new PermitHandle(taker, grant) : null;

/** `acquire(permits?, options?)` of a semaphore kind: waits as long as `waitTime` allows, else rejects. */
export function acquireHandle(taker: PermitTaker, first: unknown, second: unknown): Promise<PermitHandle> {
  try {
    const [permits, call] = permitCall(taker, first, second, 'acquire');
    return taker.take(permits, call, toHandle);
  } catch (error) {
    return Promise.reject(error);
  }
}

/** `tryAcquire(permits?, options?)` of a semaphore kind: a single attempt unless `waitTime` is given. */
export function tryAcquireHandle(taker: PermitTaker, first: unknown, second: unknown): Promise<PermitHandle | null> {
  try {
    const [permits, call] = permitCall(taker, first, second, 'tryAcquire');
    return taker.take(permits, call.waitTime === undefined ? { ...call, waitTime: 0 } : call, toHandleOrNull);
  } catch (error) {
    return Promise.reject(error);
  }
}

/** `using(fn, options?)` of a semaphore kind: runs `fn` holding the permits, and gives them back. */
export async function usingHandle<T>(
  taker: PermitTaker,
  fn: (signal: AbortSignal) => Promise<T> | T,
  options: unknown,
): Promise<T> {
  checkCallback(fn);
  const call = resolveSyncOptions(options, ['permits', ...taker.acquireKeys], 'using');
  const { permits: _permits, ...acquireOptions } = (options ?? {}) as { permits?: unknown };
  const handle = await acquireHandle(taker, call.permits ?? 1, acquireOptions);
  return holdWhile(handle, fn, taker.ctx.logger);
}

function permitCall(taker: PermitTaker, first: unknown, second: unknown, what: string): [number, SyncCall] {
  const [permits, options] = splitPermits(first, second, 1);
  checkPermits(permits, 'permits', taker.minPermits);
  return [permits, resolveSyncOptions(options, taker.acquireKeys, what)];
}
