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

/** Owner token stored as the lock hash field: `<clientId>:<threadId>`. */
export function ownerToken(clientId: string, threadId: number): string {
  return `${clientId}:${threadId}`;
}

/** Message a lock channel carries when a lock is released. */
export const UNLOCK_MESSAGE = '0';
/** Message a read/write lock channel carries when a read lock is released (wakes every waiter). */
export const READ_UNLOCK_MESSAGE = '1';

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
