import { InvalidArgumentError, LockAcquireTimeoutError, LockNotHeldError } from '../errors';
import { READ_UNLOCK_MESSAGE, lockChannel, ownerToken } from '../keys';
import {
  checkThreadId,
  resolveCallOptions,
  type AcquireOptions,
  type CallOptions,
  type LockOptions,
  type OwnerOptions,
  type TryLockOptions,
} from '../options';
import type { WakePolicy } from '../pubsub/manager';
import type { TrackedLease } from '../renewal/scheduler';
import { newRequestId, type UnlockResult } from '../scripts/lock';
import { acquireWithWait, type AttemptSource } from './acquisition';
import type { LockContext } from './context';
import { LockHandle, type HandleOwner } from './handle';

/** Lock channels: `0` (unlock) wakes one waiter, `1` (read unlock) wakes them all. */
const lockWakePolicy: WakePolicy = (message) => (message === READ_UNLOCK_MESSAGE ? Infinity : 1);

/**
 * A reentrant distributed lock, stored and signalled exactly as Redisson's `RLock`: a hash holding one
 * field `<clientId>:<threadId>` with the hold count, and `0` published on
 * `redisson_lock__channel:{name}` when it is released. Get one from `RedissonClient.getLock`.
 *
 * The owner of a call is, in order: its `threadId` option, the current owner scope
 * (`redisson.run`, `lock.using`), else, to acquire, a fresh id; to release or query, the id of this
 * client's unscoped acquisition of the lock still held.
 */
export class RLock implements HandleOwner {
  /** @internal Use `RedissonClient.getLock`. */
  /** Channel of the release messages, used by every acquisition and release. */
  private readonly channel: string;

  constructor(
    private readonly ctx: LockContext,
    /** The lock's name: the key of its hash. */
    readonly name: string,
  ) {
    this.channel = lockChannel(name);
  }

  /** Waits as long as it takes for the lock. Without `leaseTime` the watchdog keeps the lease alive. */
  lock(options?: LockOptions): Promise<void> {
    return rejectingThrows(() => {
      const call = resolveCallOptions(options, ['leaseTime', 'threadId', 'signal']);
      if (call.threadId === undefined) this.ctx.scopes.warnIfWaitingForItself(this.name);
      return this.acquireHold(call, toNothing);
    });
  }

  /** Tries to acquire, waiting up to `waitTime` ms (default: a single attempt); resolves whether it did. */
  tryLock(options?: TryLockOptions): Promise<boolean> {
    return rejectingThrows(() => this.acquireHold(withSingleAttemptDefault(resolveCallOptions(options)), toBoolean));
  }

  /**
   * Acquires and resolves a {@link LockHandle}; waits as long as it takes, or rejects with
   * {@link LockAcquireTimeoutError} when a given `waitTime` runs out.
   */
  acquire(options?: AcquireOptions): Promise<LockHandle> {
    return rejectingThrows(() => this.acquireHold(resolveCallOptions(options), toHandle));
  }

  /** Like {@link acquire}, but resolves `null` instead of timing out; no `waitTime`: a single attempt. */
  tryAcquire(options?: AcquireOptions): Promise<LockHandle | null> {
    return rejectingThrows(() => this.acquireHold(withSingleAttemptDefault(resolveCallOptions(options)), toHandleOrNull));
  }

  /**
   * Runs `fn` holding the lock, inside an owner scope (the caller's, or a new one), and releases it
   * afterwards. `fn` gets the handle's `signal`, which aborts if the lock is lost meanwhile.
   */
  async using<T>(fn: (signal: AbortSignal) => Promise<T> | T, options?: AcquireOptions): Promise<T> {
    if (typeof fn !== 'function') throw new InvalidArgumentError('using() needs a function');
    const call = resolveCallOptions(options);
    return this.ctx.scopes.run(async () => {
      const handle = await this.acquireHold(call, toHandle);
      let result: T;
      try {
        result = await fn(handle.signal);
      } catch (error) {
        await handle.release().catch(() => undefined);
        throw error;
      }
      await handle.release();
      return result;
    });
  }

  /** Releases one hold of the current owner; rejects with {@link LockNotHeldError} if it holds none. */
  async unlock(options?: OwnerOptions): Promise<void> {
    const { threadId } = resolveCallOptions(options, ['threadId']);
    const current = threadId ?? this.ctx.scopes.resolve(this.name);
    if (current === undefined) throw this.notHeld('this client knows no held acquisition of it by the caller');
    await this.releaseHold(current);
  }

  /** Deletes the lock whoever holds it and wakes a waiter; resolves whether it was held. */
  async forceUnlock(): Promise<boolean> {
    this.ctx.lifetime.throwIfAborted();
    const existed = await this.ctx.scripts.forceUnlock(this.name);
    this.ctx.renewal.loseAll(this.name, 'it was force-unlocked');
    return existed;
  }

  /** Whether anyone holds the lock. */
  async isLocked(): Promise<boolean> {
    this.ctx.lifetime.throwIfAborted();
    return this.ctx.scripts.isLocked(this.name);
  }

  /** Whether the current owner (its scope, or this client's unscoped holder of the lock) holds it. */
  async isHeldByCurrentThread(): Promise<boolean> {
    const current = this.ctx.scopes.resolve(this.name);
    return current === undefined ? false : this.isHeldByThread(current);
  }

  /** Whether `<clientId>:<threadId>` holds the lock. */
  async isHeldByThread(threadId: number): Promise<boolean> {
    checkThreadId(threadId);
    this.ctx.lifetime.throwIfAborted();
    return this.ctx.scripts.isHeldBy(this.name, this.owner(threadId));
  }

  /** The current owner's hold count; 0 when it does not hold the lock. */
  async getHoldCount(options?: OwnerOptions): Promise<number> {
    const { threadId } = resolveCallOptions(options, ['threadId']);
    const current = threadId ?? this.ctx.scopes.resolve(this.name);
    if (current === undefined) return 0;
    this.ctx.lifetime.throwIfAborted();
    return this.ctx.scripts.holdCount(this.name, this.owner(current));
  }

  /** Time left on the lease in ms: -2 when the lock is free, -1 when held without expiry. */
  async remainTimeToLive(): Promise<number> {
    this.ctx.lifetime.throwIfAborted();
    return this.ctx.scripts.remainTimeToLive(this.name);
  }

  /** @internal Releases one hold of `threadId`, counted in `lease` if known (used by `unlock` and handles). */
  releaseHold(threadId: number, lease?: TrackedLease): Promise<void> {
    const { lifetime } = this.ctx;
    return lifetime.aborted ? Promise.reject(lifetime.reason) : this.release(threadId, lease);
  }

  /** Releases one hold of `threadId`, even after shutdown (the connection is the caller's). */
  private async release(threadId: number, known?: TrackedLease): Promise<void> {
    const owner = this.owner(threadId);
    const sentAt = performance.now();
    const { renewal } = this.ctx;
    const lease = renewal.unregister(this.name, owner, known);
    // Remaining holds keep the lease of the latest acquisition (Redisson's "internal lease").
    const leaseTime = lease?.leaseTime ?? this.ctx.options.lockWatchdogTimeout;
    const unlocking = this.ctx.scripts.unlock({ name: this.name, owner, leaseTime, requestId: newRequestId() });
    // When this should free the lock, the next local waiter's attempt goes out right behind it.
    const handOff = lease?.holds === 0 ? this.ctx.pubsub.handOff(this.channel) : undefined;
    let result: UnlockResult;
    try {
      result = await unlocking;
    } catch (error) {
      handOff?.unlocked(false);
      throw error;
    }
    handOff?.unlocked(result === 'released');
    if (result === 'decremented') {
      if (lease) renewal.extend(lease, sentAt, leaseTime);
    } else {
      // Redis says the owner holds nothing: holds still counted here are stale.
      if (lease) renewal.forget(lease);
      this.ctx.scopes.forgetUnscoped(this.name, threadId);
    }
    if (result === 'not-held') {
      throw this.notHeld('it was never acquired, was already released, or its lease expired', owner);
    }
    this.ctx.emit('released', { name: this.name, owner, fully: result === 'released' });
  }

  /**
   * Acquires one hold, waiting up to `waitTime` (undefined: without limit), and resolves what
   * `outcome` makes of the owner's thread id (`undefined` when the time ran out). The acquisition
   * resolves that value itself, so a parked waiter keeps no suspended frames or chained callbacks.
   * It rejects before sending anything on a closed client or an aborted signal.
   */
  private acquireHold<T>(call: CallOptions, outcome: Outcome<T>): Promise<T> {
    const scoped = call.threadId ?? this.ctx.scopes.current();
    const threadId = scoped ?? this.ctx.scopes.nextThreadId();
    return acquireWithWait(this.ctx, {
      attempts: new LockAttempts(this, this.ctx, threadId, scoped === undefined, call, outcome),
      channel: this.channel,
      policy: lockWakePolicy,
      waitTime: call.waitTime,
      turnBound: call.leaseTime ?? this.ctx.options.lockWatchdogTimeout,
      signal: call.signal,
    });
  }

  /**
   * @internal Completes an acquisition (used by its attempts). One that landed just as the caller
   * gave up (or the client closed) is given back rather than held behind their back, and rejects.
   */
  concludeAcquisition(
    threadId: number,
    owner: string,
    unscoped: boolean,
    signal: AbortSignal | undefined,
  ): Promise<never> | undefined {
    const { lifetime } = this.ctx;
    const cancelledBy = signal?.aborted ? signal : lifetime.aborted ? lifetime : undefined;
    if (cancelledBy) return this.giveBack(threadId, cancelledBy.reason);
    if (unscoped) this.ctx.scopes.rememberUnscoped(this.name, threadId);
    this.ctx.emit('acquired', { name: this.name, owner });
    return undefined;
  }

  /** Releases a hold nobody wants any more, then rejects with `reason`. */
  private async giveBack(threadId: number, reason: unknown): Promise<never> {
    await this.release(threadId).catch(() => undefined);
    throw reason;
  }

  private owner(threadId: number): string {
    return ownerToken(this.ctx.clientId, threadId);
  }

  private notHeld(why: string, owner?: string): LockNotHeldError {
    const by = owner ? ` by owner ${owner}` : '';
    return new LockNotHeldError(`Lock '${this.name}' is not held${by}: ${why}`, this.name);
  }
}

/**
 * The attempts of one acquisition, and what its call resolves; the client's lease tracker learns of
 * every hold they add.
 */
class LockAttempts<T> implements AttemptSource<T> {
  private abandoned = false;
  private readonly name: string;
  private readonly owner: string;
  /** The owner's lease, once an attempt acquired. */
  private lease: TrackedLease | undefined;

  constructor(
    private readonly lock: RLock,
    private readonly ctx: LockContext,
    private readonly threadId: number,
    private readonly unscoped: boolean,
    private readonly call: CallOptions,
    private readonly outcome: Outcome<T>,
  ) {
    this.name = lock.name;
    this.owner = ownerToken(ctx.clientId, threadId);
  }

  conclude(acquired: boolean): T | Promise<T> {
    const { lock, threadId, call, lease } = this;
    if (!acquired || !lease) return this.outcome(lock, undefined, call);
    return (
      lock.concludeAcquisition(threadId, this.owner, this.unscoped, call.signal) ??
      this.outcome(lock, { threadId, lease }, call)
    );
  }

  abandon(): void {
    this.abandoned = true;
  }

  /**
   * One run of the acquire script. A success is tracked before anyone can see it (so no release can
   * race it), unless the caller abandoned the attempt meanwhile: then it is undone. A failure in
   * transit leaves the outcome unknown, so whatever it may have added is undone too. (Should one
   * owner run parallel acquisitions of one lock and one of them fail in transit, the trim cannot
   * tell whose hold it removes; one owner's holds are one logical thread's, so this stays rare.)
   */
  async attempt(): Promise<number | null> {
    const { ctx, name, owner } = this;
    const { renewal, scripts } = ctx;
    const explicitLease = this.call.leaseTime;
    const leaseTime = explicitLease ?? ctx.options.lockWatchdogTimeout;
    const sentAt = performance.now();
    const lease = renewal.beginAcquire(name, owner);
    const believedHolds = lease.believedHolds;
    let ttl: number | null;
    try {
      ttl = await scripts.acquire(name, owner, leaseTime, believedHolds);
    } catch (error) {
      renewal.endAcquire(lease);
      scripts.trim(name, owner, believedHolds).catch(() => undefined);
      throw error;
    }
    if (ttl !== null || this.abandoned) {
      renewal.endAcquire(lease);
      if (ttl === null) scripts.trim(name, owner, believedHolds).catch(() => undefined);
      return ttl;
    }
    renewal.endAcquire(lease, { sentAt, leaseTime, renew: explicitLease === undefined });
    this.lease = lease;
    return ttl;
  }
}

/** An acquired hold: the owner's thread id and the lease it counts in. */
interface Hold {
  threadId: number;
  lease: TrackedLease;
}

/** What a call resolves, made from the acquired hold (`undefined`: the wait time ran out). */
type Outcome<T> = (lock: RLock, hold: Hold | undefined, call: CallOptions) => T;

const toNothing: Outcome<void> = () => undefined;
const toBoolean: Outcome<boolean> = (_lock, hold) => hold !== undefined;
const toHandleOrNull: Outcome<LockHandle | null> = (lock, hold) =>
  hold === undefined ? null : new LockHandle(lock, hold.threadId, hold.lease);
const toHandle: Outcome<LockHandle> = (lock, hold, call) => {
  if (hold === undefined) throw new LockAcquireTimeoutError(lock.name, call.waitTime ?? 0);
  return new LockHandle(lock, hold.threadId, hold.lease);
};

/** `tryLock` and `tryAcquire` make a single attempt unless given a `waitTime`. */
function withSingleAttemptDefault(call: CallOptions): CallOptions {
  return call.waitTime === undefined ? { ...call, waitTime: 0 } : call;
}

/** Runs `start`, turning a synchronous throw (bad input, closed client) into a rejection. */
function rejectingThrows<T>(start: () => Promise<T>): Promise<T> {
  try {
    return start();
  } catch (error) {
    return Promise.reject(error);
  }
}
