export { RedissonClient, type ClientDiagnostics } from './client';
export type { RedisConnection } from './connection';
export {
  ClientClosedError,
  InvalidArgumentError,
  LockAcquireTimeoutError,
  LockLostError,
  LockNotHeldError,
  RedissonError,
  type RedissonErrorCode,
} from './errors';
export type { LockEvent, RedissonEvents } from './events';
export { BaseLock } from './locks/base-lock';
export { LockHandle } from './locks/handle';
export { RLock } from './locks/rlock';
export {
  DEFAULTS,
  MAX_NAME_BYTES,
  MAX_TIME_MS,
  type AcquireOptions,
  type LockOptions,
  type Logger,
  type OwnerOptions,
  type RedissonOptions,
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
