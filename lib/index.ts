export { RedissonClient, type ClientDiagnostics } from './client';
export type { RedisConnection } from './connection';
export {
  ClientClosedError,
  InvalidArgumentError,
  LockAcquireTimeoutError,
  LockLostError,
  LockNotHeldError,
  QuorumError,
  RedissonError,
  type MemberOutcome,
  type RedissonErrorCode,
} from './errors';
export type { LockEvent, RedissonEvents } from './events';
export { BaseLock } from './locks/base-lock';
export { BASE_WAIT_PER_LOCK_MS, CompositeLock } from './locks/composite';
export { LockHandle } from './locks/handle';
export { MultiLock } from './locks/multi-lock';
export { MEMBER_REPLY_BOUND_MS, RedLock, RedLockHandle, clockDrift } from './locks/red-lock';
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
