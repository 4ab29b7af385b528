/**
 * Key and channel names, derived exactly as Redisson derives them so that both clients meet on the
 * same keys. A derived name always carries the hash tag of the object's name, which keeps every key
 * of one primitive in one cluster slot.
 */

/** `prefix:{name}`, or `prefix:name` when the name already contains `{` (Redisson's rule, verbatim). */
export function prefixName(prefix: string, name: string): string {
  return name.includes('{') ? `${prefix}:${name}` : `${prefix}:{${name}}`;
}

/** Channel on which a released lock publishes `0`: `redisson_lock__channel:{name}`. */
export function lockChannel(name: string): string {
  return prefixName('redisson_lock__channel', name);
}

/** Key recording the outcome of one unlock call: `redisson_unlock_latch:{name}:<requestId>`. */
export function unlockLatchKey(name: string, requestId: string): string {
  return `${prefixName('redisson_unlock_latch', name)}:${requestId}`;
}

/** Counter a fenced lock draws its tokens from: `redisson_lock_token:{name}`. */
export function fencingTokenKey(name: string): string {
  return prefixName('redisson_lock_token', name);
}

/** Owner token stored as the lock hash field: `<clientId>:<threadId>`. */
export function ownerToken(clientId: string, threadId: number): string {
  return `${clientId}:${threadId}`;
}

/** Message a lock channel carries when a lock is released. */
export const UNLOCK_MESSAGE = '0';
/** Message a read/write lock channel carries when a read lock is released (wakes every waiter). */
export const READ_UNLOCK_MESSAGE = '1';

/** Channel of a read/write lock, shared by its read and write lock: `redisson_rwlock:{name}`. */
export function readWriteLockChannel(name: string): string {
  return prefixName('redisson_rwlock', name);
}

/**
 * Prefix of every read hold's timeout key of a read/write lock: `{name}`, or `name` itself when it
 * already contains `{` (Redisson's suffixName rule).
 */
export function readTimeoutKeyPrefix(name: string): string {
  return name.includes('{') ? name : `{${name}}`;
}

/** Prefix of one reader's timeout keys: `{name}:<clientId>:<threadId>:rwlock_timeout`; hold n adds `:n`. */
export function readerTimeoutPrefix(name: string, reader: string): string {
  return `${readTimeoutKeyPrefix(name)}:${reader}:rwlock_timeout`;
}

/** Owner token of a write lock: `<clientId>:<threadId>:write`. */
export function writerToken(clientId: string, threadId: number): string {
  return `${ownerToken(clientId, threadId)}:write`;
}

/** Fair lock's wait queue (a LIST of owner tokens, head first): `redisson_lock_queue:{name}`. */
export function fairLockQueue(name: string): string {
  return prefixName('redisson_lock_queue', name);
}

/** Fair lock's waiter deadlines (a ZSET of owner tokens, epoch ms): `redisson_lock_timeout:{name}`. */
export function fairLockTimeouts(name: string): string {
  return prefixName('redisson_lock_timeout', name);
}

/** A fair-lock waiter's own channel: `redisson_lock__channel:{name}:<clientId>:<threadId>`. */
export function fairWaiterChannel(name: string, owner: string): string {
  return `${lockChannel(name)}:${owner}`;
}

/** `{name}:suffix`, or `name:suffix` when the name already contains `{` (Redisson's rule, verbatim). */
export function suffixName(name: string, suffix: string): string {
  return name.includes('{') ? `${name}:${suffix}` : `{${name}}:${suffix}`;
}

/** Channel of both semaphores, carrying permit counts: `redisson_sc:{name}`. */
export function semaphoreChannel(name: string): string {
  return prefixName('redisson_sc', name);
}

/** ZSET of a permit-expirable semaphore's acquired permits and their expiry: `{name}:timeout`. */
export function permitTimeoutKey(name: string): string {
  return suffixName(name, 'timeout');
}

/**
 * Channel of a count-down latch: always `redisson_countdownlatch__channel__{name}`, braces added
 * even when the name has its own (Redisson's rule; such a channel lands in another cluster slot).
 */
export function latchChannel(name: string): string {
  return `redisson_countdownlatch__channel__{${name}}`;
}

/** Score Redisson gives a permit that never expires. */
export const PERMIT_NO_EXPIRY = 922337203685477;
/** Message a latch channel carries when the count reaches zero. */
export const LATCH_ZERO_MESSAGE = '0';
/** Message a latch channel carries when the count is set (or the latch deleted). */
export const LATCH_NEW_COUNT_MESSAGE = '1';
