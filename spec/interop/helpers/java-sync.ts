import { JavaLock } from './java-lock';
import type { JavaPeer } from './peer';

/** Slack on a reply's timeout beyond the wait a call asks Java for. */
const REPLY_SLACK = 30_000;

/** A Redisson `RFencedLock` in the peer: the RLock operations plus the token-returning ones. */
export class JavaFencedLock extends JavaLock {
  constructor(peer: JavaPeer, name: string, thread: number) {
    super(peer, name, thread, 'fencedLock');
  }

  /** `lockAndGetToken()`: waits as long as it takes, watchdog lease. */
  lockAndGetToken(): Promise<number> {
    return this.call('lockAndGetToken', {}, 60_000);
  }

  /** `tryLockAndGetToken(waitMs, leaseMs, MILLISECONDS)`: the token, or null. */
  tryLockAndGetToken(waitMs = 0, leaseMs = -1): Promise<number | null> {
    return this.call('tryLockAndGetToken', { waitMs, leaseMs }, waitMs + REPLY_SLACK);
  }

  getToken(): Promise<number | null> {
    return this.call('getToken');
  }

  override onThread(thread: number): JavaFencedLock {
    return new JavaFencedLock(this.peer, this.name, thread);
  }
}

/** Something of the peer called by name from one Java thread. */
abstract class JavaObject {
  protected abstract readonly kind: string;

  constructor(
    protected readonly peer: JavaPeer,
    readonly name: string,
    readonly thread: number,
  ) {}

  protected call<T>(op: string, args: Record<string, unknown> = {}, timeoutMs?: number): Promise<T> {
    return this.peer.call<T>({ op, kind: this.kind, name: this.name, thread: this.thread, ...args }, timeoutMs);
  }
}

/** A Redisson `RSemaphore` in the peer. */
export class JavaSemaphore extends JavaObject {
  protected readonly kind = 'semaphore';

  trySetPermits(permits: number): Promise<boolean> {
    return this.call('trySetPermits', { permits });
  }

  /** `acquire(permits)`: no time bound, woken by messages only (Redisson's loop). */
  acquire(permits = 1): Promise<null> {
    return this.call('acquire', { permits }, 60_000);
  }

  tryAcquire(permits = 1, waitMs = 0): Promise<boolean> {
    return this.call('tryAcquire', { permits, waitMs }, waitMs + REPLY_SLACK);
  }

  release(permits = 1): Promise<null> {
    return this.call('release', { permits });
  }

  availablePermits(): Promise<number> {
    return this.call('availablePermits');
  }

  /** `addPermits(permits)`; negative: a capacity cut (the count may go below zero). */
  addPermits(permits: number): Promise<null> {
    return this.call('addPermits', { permits });
  }

  drainPermits(): Promise<number> {
    return this.call('drainPermits');
  }

  delete(): Promise<boolean> {
    return this.call('delete');
  }

  onThread(thread: number): JavaSemaphore {
    return new JavaSemaphore(this.peer, this.name, thread);
  }
}

/** A Redisson `RPermitExpirableSemaphore` in the peer, one permit per call; ids are 32 hex characters. */
export class JavaExpirableSemaphore extends JavaObject {
  protected readonly kind = 'expirableSemaphore';

  trySetPermits(permits: number): Promise<boolean> {
    return this.call('trySetPermits', { permits });
  }

  /** `acquire()` (never expires) or `acquire(leaseMs, MILLISECONDS)`; the permit id. */
  acquire(leaseMs = -1): Promise<string> {
    return this.call('acquire', { leaseMs }, 60_000);
  }

  /** `tryAcquire(waitMs, leaseMs, MILLISECONDS)`: the permit id, or null. */
  tryAcquire(waitMs = 0, leaseMs = -1): Promise<string | null> {
    return this.call('tryAcquire', { waitMs, leaseMs }, waitMs + REPLY_SLACK);
  }

  /** `release(id)`: throws (IllegalArgumentException) for a permit not held. */
  release(permitId: string): Promise<null> {
    return this.call('release', { permitId });
  }

  tryRelease(permitId: string): Promise<boolean> {
    return this.call('tryRelease', { permitId });
  }

  availablePermits(): Promise<number> {
    return this.call('availablePermits');
  }

  acquiredPermits(): Promise<number> {
    return this.call('acquiredPermits');
  }

  /** `addPermits(permits)`; negative: a capacity cut. */
  addPermits(permits: number): Promise<null> {
    return this.call('addPermits', { permits });
  }

  delete(): Promise<boolean> {
    return this.call('delete');
  }

  onThread(thread: number): JavaExpirableSemaphore {
    return new JavaExpirableSemaphore(this.peer, this.name, thread);
  }
}

/** A Redisson `RCountDownLatch` in the peer. */
export class JavaLatch extends JavaObject {
  protected readonly kind = 'latch';

  trySetCount(count: number): Promise<boolean> {
    return this.call('trySetCount', { count });
  }

  countDown(): Promise<null> {
    return this.call('countDown');
  }

  /** `await()` (no bound, message-driven) without `waitMs`, else `await(waitMs, MILLISECONDS)`. */
  await(waitMs?: number): Promise<boolean> {
    return this.call('await', waitMs === undefined ? {} : { waitMs }, (waitMs ?? 30_000) + REPLY_SLACK);
  }

  getCount(): Promise<number> {
    return this.call('getCount');
  }

  delete(): Promise<boolean> {
    return this.call('delete');
  }

  onThread(thread: number): JavaLatch {
    return new JavaLatch(this.peer, this.name, thread);
  }
}
