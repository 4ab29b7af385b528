import { READ_UNLOCK_MESSAGE, readWriteLockChannel, writerToken } from '../keys';
import type { Lease } from '../kernel/leases/lease';
import { wakeByMessage, type WakePolicy } from '../kernel/pubsub/wake';
import { newRequestId } from './scripts/lock';
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
import { BaseLock } from '../kernel/lock';
import type { LockKind } from '../kernel/lock-kind';
import type { ClientContext, HoldKind } from '../kernel/context';
import { HASH_LOCK, HASH_QUERIES } from './rlock';

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
 * The read lock's record: shared holds, each with its own term (a partial release keeps the others'
 * leases), and a newcomer that need not queue behind this client's waiters (it may get in while they
 * cannot, e.g. behind a writer's waiting).
 */
const READ: LockKind = {
  kind: 'read-lock',
  holds: READ_LOCK,
  ...HASH_QUERIES,
  isLocked: ({ ctx, name }) => isReadWriteLocked(ctx.scripts, name, 'read'),
  attempt: ({ ctx, name }, { owner, threadId, leaseTime, believedHolds }) =>
    acquireRead(ctx.scripts, name, owner, writerToken(ctx.clientId, threadId), leaseTime, believedHolds),
  trim: ({ ctx, name }, owner, holdsBefore) => trimRead(ctx.scripts, name, owner, holdsBefore),
  release: ({ ctx, name }, owner, leaseTime) => unlockRead(ctx.scripts, { name, owner, leaseTime, requestId: newRequestId() }),
  async forceRelease({ ctx, name }) {
    const existed = await forceUnlockReadWrite(ctx.scripts, name, 'read');
    return { existed, lost: existed ? [READ_LOCK] : [] };
  },
  channel: ({ name }) => readWriteLockChannel(name),
  wake: RW_WAKE,
  queuesBehindLocalWaiters: false,
  partialReleaseResetsLease: false,
};

/** The write lock's record: its owner token is `<clientId>:<threadId>:write`; freeing it frees the readers too. */
const WRITE: LockKind = {
  kind: 'write-lock',
  holds: WRITE_LOCK,
  ...HASH_QUERIES,
  owner: ({ ctx }, threadId) => writerToken(ctx.clientId, threadId),
  isLocked: ({ ctx, name }) => isReadWriteLocked(ctx.scripts, name, 'write'),
  attempt: ({ ctx, name }, { owner, leaseTime, believedHolds }) => acquireWrite(ctx.scripts, name, owner, leaseTime, believedHolds),
  trim: ({ ctx, name }, owner, holdsBefore) => trimWrite(ctx.scripts, name, owner, holdsBefore),
  release: ({ ctx, name }, owner, leaseTime) => unlockWrite(ctx.scripts, { name, owner, leaseTime, requestId: newRequestId() }),
  async forceRelease({ ctx, name }) {
    const existed = await forceUnlockReadWrite(ctx.scripts, name, 'write');
    return { existed, lost: existed ? [WRITE_LOCK, READ_LOCK] : [] };
  },
  channel: ({ name }) => readWriteLockChannel(name),
  wake: RW_WAKE,
};

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
  /** @internal Use `RReadWriteLock.readLock`. */
  constructor(ctx: ClientContext, name: string) {
    super(ctx, name, READ);
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
  /** @internal Use `RReadWriteLock.writeLock`. */
  constructor(ctx: ClientContext, name: string) {
    super(ctx, name, WRITE);
  }
}
