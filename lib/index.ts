export { RedissonClient, type ClientDiagnostics } from './client';
export type { RedisConnection } from './connection';
export {
  ClientClosedError,
  InvalidArgumentError,
  LockAcquireTimeoutError,
  LockLostError,
  LockNotHeldError,
  LockReentryError,
  RedissonError,
  type RedissonErrorCode,
} from './errors';
export type { LockEvent, RedissonEvents } from './events';
export { BaseLock } from './locks/base-lock';
export { FairLock } from './locks/fair-lock';
export { LockHandle } from './locks/handle';
export { NonReentrantFairLock } from './locks/non-reentrant-fair-lock';
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
