export { RedissonClient, type ClientDiagnostics } from './client';
export type { RedisConnection } from './connection';
export {
  ClientClosedError,
  InvalidArgumentError,
  LockAcquireTimeoutError,
  LockLostError,
  LockNotHeldError,
  RedissonError,
  ReplicaSyncError,
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
  type ReplicaSyncOptions,
  type ResolvedOptions,
  type TryLockOptions,
} from './options';
