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
  DeadlockError,
  InvalidArgumentError,
  LockAcquireTimeoutError,
  LockLostError,
  LockNotHeldError,
  LockReentryError,
  QuorumError,
  RedissonError,
  ReplicaSyncError,
  RedisUnavailableError,
  type DeadlockWait,
  type MemberOutcome,
  type RedissonErrorCode,
} from './errors';
export type { AcquisitionStats, LockEvent, RedissonEvents } from './events';
export { BaseLock } from './kernel/lock';
export type { DeletedObjectListener, ExpiredObjectListener, ObjectListener } from './kernel/pubsub/key-events';
export { BASE_WAIT_PER_LOCK_MS, CompositeLock } from './kinds/composite';
export { RFairLock } from './kinds/fair-lock';
export { RFasterMultiLock } from './kinds/faster-multi-lock';
export type { MultiLockValue } from './kinds/values/kryo';
export { RFencedLock, type FencedLockHandle } from './kinds/fenced-lock';
export { Handle } from './kernel/handle';
export type { HoldOptions, Holdable } from './kernel/holding';
export { RMultiLock } from './kinds/multi-lock';
export { RNonReentrantFairLock } from './kinds/non-reentrant-fair-lock';
export { RNonReentrantLock } from './kinds/non-reentrant-lock';
export { RReadLock, RReadWriteLock, RWriteLock } from './kinds/read-write-lock';
export { MEMBER_REPLY_BOUND_MS, RRedLock, RedLockHandle, clockDrift } from './kinds/red-lock';
export { RLock } from './kinds/rlock';
export {
  RSpinLock,
  type BackOffOptions,
  type ConstantBackOffOptions,
  type ExponentialBackOffOptions,
} from './kinds/spin-lock';
export {
  DEFAULTS,
  MAX_NAME_BYTES,
  MAX_TIME_MS,
  type AcquireOptions,
  type DeadlockDetectionOptions,
  type LockOptions,
  type Logger,
  type OwnerInfo,
  type OwnerOptions,
  type RedissonOptions,
  type ReplicaSyncOptions,
  type ResolvedReplicaSync,
  type ResolvedOptions,
  type TryLockOptions,
} from './options';
export { ownerRecordKey, type LockHolder, type LockSlot, type RecordedOwner } from './kernel/owner-record';
export type { ScopeOptions } from './owner';
export { RCountDownLatch } from './kinds/count-down-latch';
export {
  MAX_PERMITS,
  type ExpirableAcquireOptions,
  type ExpirableUsingOptions,
  type LatchAwaitOptions,
  type SemaphoreAcquireOptions,
  type SemaphoreUsingOptions,
  type TrySetPermitsOptions,
} from './kinds/sync-options';
export { PermitHandle } from './kinds/permits';
export { RPermitExpirableSemaphore } from './kinds/permit-expirable-semaphore';
export { RSemaphore } from './kinds/semaphore';
export {
  FairLock,
  FencedLock,
  LockHandle,
  MultiLock,
  NonReentrantFairLock,
  NonReentrantLock,
  RedLock,
  SpinLock,
} from './deprecated';
