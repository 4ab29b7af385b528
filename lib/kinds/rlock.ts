import { READ_UNLOCK_MESSAGE, lockChannel } from '../keys';
import { wakeByMessage, type WakePolicy } from '../kernel/pubsub/wake';
import { acquireLock, forceUnlockLock, renewLocks, trimLock, unlockLock, type UnlockResult } from './scripts/lock';
import { BaseLock, type AttemptInput, type AttemptResult } from './base-lock';
import type { ClientContext, HoldKind } from '../kernel/context';
import { LocalHandOff } from '../kernel/hand-off';

/** Locks stored as RLock's hash, renewed by extending the hash while the owner's field is there. */
export const HASH_LOCK: HoldKind = {
  renew: (scripts, batch, leaseTime) =>
    renewLocks(scripts, batch.map((lease) => lease.name), batch.map((lease) => lease.owner), leaseTime),
};

/**
 * Lock channels: `0` (unlock) wakes one waiter, `1` (read unlock) wakes them all; a release that
 * frees the lock is handed straight to the next local waiter.
 */
const RLOCK_WAKE: WakePolicy = LocalHandOff.over(wakeByMessage([READ_UNLOCK_MESSAGE]));

/**
 * A reentrant distributed lock, stored and signalled exactly as Redisson's `RLock`: a hash holding one
 * field `<clientId>:<threadId>` with the hold count, and `0` published on
 * `redisson_lock__channel:{name}` when it is released. Get one from `RedissonClient.getLock`.
 *
 * The owner of a call is, in order: its `threadId` option, the current owner scope
 * (`redisson.run`, `lock.using`), else, to acquire, a fresh id; to release or query, the id of this
 * client's unscoped acquisition of the lock still held.
 *
 * @example
 * ```ts
 * const lock = redisson.getLock('invoice:42');
 * const sent = await lock.using(() => sendInvoice(42), { waitTime: 5_000 });
 * ```
 * @category Locks
 */
export class RLock extends BaseLock {
  /** @internal */
  readonly kind: string = 'lock';
  /** Channel of the release messages, used by every acquisition and release. */
  private readonly channel: string;
  /** @internal */
  protected readonly wakePolicy = RLOCK_WAKE;

  /** @internal Use `RedissonClient.getLock`. */
  constructor(ctx: ClientContext, name: string) {
    super(ctx, name, HASH_LOCK);
    this.channel = lockChannel(name);
  }

  /** @internal */
  protected override get handsOffLocally(): boolean {
    return true;
  }

  /** @internal */
  protected channelFor(): string {
    return this.channel;
  }

  /** @internal */
  protected tryAcquireOnce({ owner, leaseTime, believedHolds }: AttemptInput): Promise<AttemptResult> {
    return acquireLock(this.ctx.scripts, this.name, owner, leaseTime, believedHolds);
  }

  /** @internal */
  protected undoAcquire(owner: string, holdsBefore: number): Promise<number> {
    return trimLock(this.ctx.scripts, this.name, owner, holdsBefore);
  }

  /** @internal */
  protected releaseOnce(owner: string, leaseTime: number, requestId: string): Promise<UnlockResult> {
    return unlockLock(this.ctx.scripts, { name: this.name, owner, leaseTime, requestId });
  }

  /** @internal */
  protected forceReleaseOnce(): Promise<boolean> {
    return forceUnlockLock(this.ctx.scripts, this.name);
  }
}
