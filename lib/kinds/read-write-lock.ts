import { READ_UNLOCK_MESSAGE, readWriteLockChannel, writerToken } from '../keys';
import type { Lease } from '../kernel/leases/lease';
import { wakeByMessage, type WakePolicy } from '../kernel/pubsub/wake';
import type { UnlockResult } from './scripts/lock';
import {
  acquireRead,
  acquireWrite,
  forceUnlockReadWrite,
  isReadWriteLocked,
  renewReads,
  trimRead,
  trimWrite,
  unlockRead,
  unlockWrite,
  type ReadRenewal,
} from './scripts/read-write-lock';
import type { ScriptRunner } from '../kernel/scripts/runner';
import { BaseLock, type AttemptInput, type AttemptResult } from './base-lock';
import type { ClientContext, HoldKind } from '../kernel/context';
import { HASH_LOCK } from './rlock';

/**
 * Read holds: renewed by extending, for each lock, the timeout keys of this client's own readers
 * only (and the hash while one of them is alive). A dead client's readers are never kept alive.
 */
export const READ_LOCK: HoldKind = {
  renew: (scripts, batch, leaseTime) => renewReadBatch(scripts, batch, leaseTime),
};

/** Write holds: a hash field, renewed as RLock's are, in batches of their own. */
export const WRITE_LOCK: HoldKind = { renew: (scripts, batch, leaseTime) => HASH_LOCK.renew(scripts, batch, leaseTime) };

/**
 * Both locks listen on one channel, so they share one policy: `1` (write unlock) wakes every local
 * waiter, since all waiting readers can go in together; `0` (read unlock) wakes one.
 */
const RW_WAKE: WakePolicy = wakeByMessage([READ_UNLOCK_MESSAGE]);

/** Renews a batch of read leases: one entry per lock with every reader of this client on it. */
async function renewReadBatch(scripts: ScriptRunner, batch: readonly Lease[], leaseTime: number): Promise<boolean[]> {
  const byName = new Map<string, string[]>();
  for (const lease of batch) {
    const readers = byName.get(lease.name);
    if (readers) readers.push(lease.owner);
    else byName.set(lease.name, [lease.owner]);
  }
  const locks: ReadRenewal[] = [...byName].map(([name, readers]) => ({ name, readers }));
  const flags = await renewReads(scripts, locks, leaseTime);
  // Map the flags (in order of locks, then readers) back to the batch's order.
  const flagOf = new Map<string, boolean>();
  let i = 0;
  for (const { name, readers } of locks) for (const reader of readers) flagOf.set(`${reader}\u0000${name}`, flags[i++] === true);
  return batch.map((lease) => flagOf.get(`${lease.owner}\u0000${lease.name}`) === true);
}

/**
 * A read/write lock stored and signalled exactly as Redisson's `RReadWriteLock`: one hash `name` with
 * field `mode` (`read` or `write`), a field per reader `<clientId>:<threadId>` and the writer's
 * `<clientId>:<threadId>:write`, each holding a hold count, plus one timeout key per read hold;
 * both locks announce releases on `redisson_rwlock:{name}`. Get one from
 * `RedissonClient.getReadWriteLock`.
 *
 * Readers share the lock; a writer excludes readers and other writers. Readers are preferred: a
 * waiting writer does not stop new readers. The writer's own thread may take read holds and keep
 * them after its write unlock (downgrade); a reader cannot upgrade.
 *
 * @example
 * ```ts
 * const rw = redisson.getReadWriteLock('catalog');
 * const items = await rw.readLock().using(() => readCatalog());   // shared
 * await rw.writeLock().using(() => writeCatalog([...items, item])); // exclusive
 * ```
 * @category Locks
 */
export class RReadWriteLock {
  private read: RReadLock | undefined;
  private write: RWriteLock | undefined;

  /** @internal Use `RedissonClient.getReadWriteLock`. */
  constructor(
    private readonly ctx: ClientContext,
    /** The lock's name: the key of its hash. */
    readonly name: string,
  ) {}

  /**
   * The shared lock: many readers at once, none while another thread writes. Always the same object.
   * @example
   * ```ts
   * const read = redisson.getReadWriteLock('catalog').readLock();
   * ```
   */
  readLock(): RReadLock {
    return (this.read ??= new RReadLock(this.ctx, this.name));
  }

  /**
   * The exclusive lock: one writer, no reader of another thread. Always the same object.
   * @example
   * ```ts
   * const write = redisson.getReadWriteLock('catalog').writeLock();
   * ```
   */
  writeLock(): RWriteLock {
    return (this.write ??= new RWriteLock(this.ctx, this.name));
  }
}

/**
 * The read lock of an {@link RReadWriteLock}: shared with other readers, reentrant, and granted to
 * the thread holding the write lock (downgrade). Each hold has its own timeout key, so a reader
 * whose client stops renewing stops counting once that key expires.
 *
 * `isLocked()` is true while any reader holds it (Redisson's rule); `forceUnlock()` deletes it only
 * while it is in read mode.
 *
 * @example
 * ```ts
 * const read = redisson.getReadWriteLock('catalog').readLock();
 * const handle = await read.acquire({ waitTime: 2_000 }); // waits only while a writer holds it
 * await handle.release();
 * ```
 * @category Locks
 */
export class RReadLock extends BaseLock {
  /** @internal */
  readonly kind: string = 'read-lock';
  private readonly channel: string;
  /** @internal */
  protected readonly wakePolicy = RW_WAKE;

  /** @internal Use `RReadWriteLock.readLock`. */
  constructor(ctx: ClientContext, name: string) {
    super(ctx, name, READ_LOCK);
    this.channel = readWriteLockChannel(name);
  }

  /**
   * Deletes the lock if it is in read mode, whoever holds it, and wakes a waiter; resolves whether
   * it did. While a writer holds it nothing happens (nor is any local read hold declared lost).
   * @throws {ClientClosedError} after the client's `shutdown()`.
   * @example
   * ```ts
   * const freed = await rw.readLock().forceUnlock(); // false while a writer holds it
   * ```
   */
  override async forceUnlock(): Promise<boolean> {
    this.ctx.lifetime.throwIfAborted();
    const existed = await this.forceReleaseOnce();
    if (existed) this.ledger.loseAll(this.name, 'it was force-unlocked');
    return existed;
  }

  /**
   * Whether any reader holds the lock (also the writer's own thread, after or while writing).
   * @throws {ClientClosedError} after the client's `shutdown()`.
   * @example
   * ```ts
   * if (await rw.readLock().isLocked()) console.log('readers are in');
   * ```
   */
  override async isLocked(): Promise<boolean> {
    this.ctx.lifetime.throwIfAborted();
    return isReadWriteLocked(this.ctx.scripts, this.name, 'read');
  }

  /** @internal A reader may get in while local writers wait: no turn behind them. */
  protected override get queuesBehindLocalWaiters(): boolean {
    return false;
  }

  /** @internal Each read hold keeps the lease its own acquisition set. */
  protected override get partialReleaseResetsLease(): boolean {
    return false;
  }

  /** @internal */
  protected channelFor(): string {
    return this.channel;
  }

  /** @internal */
  protected tryAcquireOnce({ owner, threadId, leaseTime, believedHolds }: AttemptInput): Promise<AttemptResult> {
    const writer = writerToken(this.ctx.clientId, threadId);
    return acquireRead(this.ctx.scripts, this.name, owner, writer, leaseTime, believedHolds);
  }

  /** @internal */
  protected undoAcquire(owner: string, holdsBefore: number): Promise<number> {
    return trimRead(this.ctx.scripts, this.name, owner, holdsBefore);
  }

  /** @internal */
  protected releaseOnce(owner: string, leaseTime: number, requestId: string): Promise<UnlockResult> {
    return unlockRead(this.ctx.scripts, { name: this.name, owner, leaseTime, requestId });
  }

  /** @internal */
  protected forceReleaseOnce(): Promise<boolean> {
    return forceUnlockReadWrite(this.ctx.scripts, this.name, 'read');
  }
}

/**
 * The write lock of an {@link RReadWriteLock}: exclusive and reentrant. A re-entry adds its lease to
 * the time left, as in Redisson. Its last release publishes `1`, which wakes every waiting reader at
 * once; if the thread still holds read holds, the lock goes to read mode without a message.
 *
 * `isLocked()` is true while a writer holds it; `forceUnlock()` deletes it only while it is in
 * write mode (with the writer's own read holds).
 *
 * @example
 * ```ts
 * await redisson.run(async () => {
 *   await rw.writeLock().lock();
 *   await rw.readLock().lock();    // the writer may read too
 *   await rw.writeLock().unlock(); // downgrade: still reading; other readers may join now
 *   await rw.readLock().unlock();
 * });
 * ```
 * @category Locks
 */
export class RWriteLock extends BaseLock {
  /** @internal */
  readonly kind: string = 'write-lock';
  private readonly channel: string;
  /** @internal */
  protected readonly wakePolicy = RW_WAKE;

  /** @internal Use `RReadWriteLock.writeLock`. */
  constructor(ctx: ClientContext, name: string) {
    super(ctx, name, WRITE_LOCK);
    this.channel = readWriteLockChannel(name);
  }

  /**
   * Whether a writer holds the lock.
   * @throws {ClientClosedError} after the client's `shutdown()`.
   * @example
   * ```ts
   * if (await rw.writeLock().isLocked()) console.log('a write is in progress');
   * ```
   */
  override async isLocked(): Promise<boolean> {
    this.ctx.lifetime.throwIfAborted();
    return isReadWriteLocked(this.ctx.scripts, this.name, 'write');
  }

  /**
   * Deletes the lock if a writer holds it, whoever that is, and wakes every waiter; resolves whether
   * it did. The writer's own read holds go with it.
   * @throws {ClientClosedError} after the client's `shutdown()`.
   * @example
   * ```ts
   * const freed = await rw.writeLock().forceUnlock(); // false unless a writer holds it
   * ```
   */
  override async forceUnlock(): Promise<boolean> {
    this.ctx.lifetime.throwIfAborted();
    const existed = await this.forceReleaseOnce();
    if (existed) {
      this.ledger.loseAll(this.name, 'it was force-unlocked');
      this.ctx.ledger(READ_LOCK).loseAll(this.name, 'it was force-unlocked');
    }
    return existed;
  }

  /** @internal `<clientId>:<threadId>:write`. */
  protected override ownerOf(threadId: number): string {
    return writerToken(this.ctx.clientId, threadId);
  }

  /** @internal */
  protected channelFor(): string {
    return this.channel;
  }

  /** @internal */
  protected tryAcquireOnce({ owner, leaseTime, believedHolds }: AttemptInput): Promise<AttemptResult> {
    return acquireWrite(this.ctx.scripts, this.name, owner, leaseTime, believedHolds);
  }

  /** @internal */
  protected undoAcquire(owner: string, holdsBefore: number): Promise<number> {
    return trimWrite(this.ctx.scripts, this.name, owner, holdsBefore);
  }

  /** @internal */
  protected releaseOnce(owner: string, leaseTime: number, requestId: string): Promise<UnlockResult> {
    return unlockWrite(this.ctx.scripts, { name: this.name, owner, leaseTime, requestId });
  }

  /** @internal */
  protected forceReleaseOnce(): Promise<boolean> {
    return forceUnlockReadWrite(this.ctx.scripts, this.name, 'write');
  }
}
