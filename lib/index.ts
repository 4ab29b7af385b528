/**
 * Everything the package exports, grouped by kind: the client, locks, synchronizers, handles,
 * errors, options and events. The guides beside it explain how they fit together.
 * @module API reference
 */
export { RedissonClient, SHUTDOWN_BOUND_MS, type ClientDiagnostics } from './client';
export type { RedisConnection } from './connection';
export {
  AofSyncUnavailableError,
  ClientClosedError,
  InvalidArgumentError,
  LockAcquireTimeoutError,
  LockLostError,
  LockNotHeldError,
  LockReentryError,
  QuorumError,
  RedissonError,
  ReplicaSyncError,
  RedisUnavailableError,
  type MemberOutcome,
  type RedissonErrorCode,
} from './errors';
export type { AcquisitionStats, LockEvent, RedissonEvents } from './events';
export { BaseLock } from './locks/base-lock';
export { BASE_WAIT_PER_LOCK_MS, CompositeLock } from './locks/composite';
export { FairLock } from './locks/fair-lock';
export { FencedLock, type FencedLockHandle } from './locks/fenced-lock';
export { LockHandle } from './locks/handle';
export { MultiLock } from './locks/multi-lock';
export { NonReentrantFairLock } from './locks/non-reentrant-fair-lock';
export { NonReentrantLock } from './locks/non-reentrant-lock';
export { RReadLock, RReadWriteLock, RWriteLock } from './locks/read-write-lock';
export { MEMBER_REPLY_BOUND_MS, RedLock, RedLockHandle, clockDrift } from './locks/red-lock';
export { RLock } from './locks/rlock';
export {
  SpinLock,
  type BackOffOptions,
  type ConstantBackOffOptions,
  type ExponentialBackOffOptions,
} from './locks/spin-lock';
export {
  DEFAULTS,
  MAX_NAME_BYTES,
  MAX_TIME_MS,
  type AcquireOptions,
  type LockOptions,
  type Logger,
  type OwnerOptions,
  type RedissonOptions,
  type ReplicaSyncOptions,
  type ResolvedReplicaSync,
  type ResolvedOptions,
  type TryLockOptions,
} from './options';
export { RCountDownLatch } from './sync/count-down-latch';
export {
  MAX_PERMITS,
  type ExpirableAcquireOptions,
  type ExpirableUsingOptions,
  type LatchAwaitOptions,
  type SemaphoreAcquireOptions,
  type SemaphoreUsingOptions,
  type TrySetPermitsOptions,
} from './sync/options';
export { PermitHandle } from './sync/permits';
export { RPermitExpirableSemaphore } from './sync/permit-expirable-semaphore';
export { RSemaphore } from './sync/semaphore';
