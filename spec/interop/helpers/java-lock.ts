import type { JavaPeer } from './peer';

/** The peer's RLock-shaped kinds (Kinds.java): each is an `RLock` of Redisson's. */
export type JavaLockKind =
  | 'lock'
  | 'fairLock'
  | 'spinLock'
  | 'nonReentrantLock'
  | 'nonReentrantFairLock'
  | 'readLock'
  | 'writeLock'
  | 'fencedLock'
  | 'fasterMultiLock';

/** A Redisson `RLock` (or a variant, by `kind`) in the peer, called from one Java thread (by its thread number). */
export class JavaLock {
  constructor(
    protected readonly peer: JavaPeer,
    readonly name: string,
    readonly thread: number,
    readonly kind: JavaLockKind = 'lock',
  ) {}

  /** `lock()`, or `lock(leaseMs, MILLISECONDS)`; no lease: Redisson's watchdog renews it. */
  lock(leaseMs = -1): Promise<null> {
    return this.call('lock', { leaseMs });
  }

  /** `tryLock(waitMs, leaseMs, MILLISECONDS)`. */
  tryLock(waitMs = 0, leaseMs = -1): Promise<boolean> {
    return this.call('tryLock', { waitMs, leaseMs }, waitMs + 30_000);
  }

  unlock(): Promise<null> {
    return this.call('unlock');
  }

  forceUnlock(): Promise<boolean> {
    return this.call('forceUnlock');
  }

  isLocked(): Promise<boolean> {
    return this.call('isLocked');
  }

  getHoldCount(): Promise<number> {
    return this.call('getHoldCount');
  }

  isHeldByCurrentThread(): Promise<boolean> {
    return this.call('isHeldByCurrentThread');
  }

  isHeldByThread(threadId: number): Promise<boolean> {
    return this.call('isHeldByThread', { threadId });
  }

  remainTimeToLive(): Promise<number> {
    return this.call('remainTimeToLive');
  }

  /** `addListener(ExpiredObjectListener)` or `addListener(DeletedObjectListener)`: resolves the listener id. */
  addListener(event: 'expired' | 'deleted'): Promise<number> {
    return this.call('addListener', { event });
  }

  /** `removeListener(listenerId)`. */
  removeListener(listenerId: number): Promise<null> {
    return this.call('removeListener', { listenerId });
  }

  /** What the peer's listeners (of any lock) heard since the last call, as `expired:<name>` or `deleted:<name>`. */
  heard(): Promise<string[]> {
    return this.call('heard');
  }

  /** The same lock from another Java thread. */
  onThread(thread: number): JavaLock {
    return new JavaLock(this.peer, this.name, thread, this.kind);
  }

  protected call<T>(op: string, args: Record<string, unknown> = {}, timeoutMs?: number): Promise<T> {
    return this.peer.call<T>({ op, kind: this.kind, name: this.name, thread: this.thread, ...args }, timeoutMs);
  }
}

/** A value of a Java group multi-lock: a string (String), a number (Integer) or a bigint (Long). */
export type JavaGroupValue = string | number | bigint;

/**
 * Redisson's `getMultiLock(group, values)` (a `RedissonFasterMultiLock`) in the peer. Its
 * getHoldCount and remainTimeToLive throw in Redisson (unsupported).
 */
export class JavaGroupLock extends JavaLock {
  constructor(
    peer: JavaPeer,
    readonly group: string,
    readonly values: readonly JavaGroupValue[],
    thread: number,
  ) {
    // The peer keeps one Redisson object per name: one per group and values.
    super(peer, `${group}|${values.map(String).join(',')}`, thread, 'fasterMultiLock');
  }

  override onThread(thread: number): JavaGroupLock {
    return new JavaGroupLock(this.peer, this.group, this.values, thread);
  }

  protected override call<T>(op: string, args: Record<string, unknown> = {}, timeoutMs?: number): Promise<T> {
    const values = this.values.map((value) => (typeof value === 'bigint' ? { long: String(value) } : value));
    return super.call<T>(op, { ...args, group: this.group, values }, timeoutMs);
  }
}
