import acquireSource from '../../../lua/fair-lock/acquire.lua';
import acquireFailedSource from '../../../lua/fair-lock/acquire-failed.lua';
import forceUnlockSource from '../../../lua/fair-lock/force-unlock.lua';
import trimSource from '../../../lua/fair-lock/trim.lua';
import unlockSource from '../../../lua/fair-lock/unlock.lua';
import { LockReentryError } from '../../errors';
import { UNLOCK_MESSAGE, fairLockQueue, fairLockTimeouts, lockChannel, unlockLatchKey } from '../../keys';
import { UNLOCK_LATCH_TTL, toUnlockResult, type UnlockRequest, type UnlockResult } from './lock';
import { REMOVED_WRITE, UNLOCK_WRITE, acquireWrite } from '../../kernel/scripts/writes';
import { toFlag, toInteger, toIntegerOrNull } from '../../kernel/scripts/reply';
import { NO_ARGS, defineScript, type ScriptRunner } from '../../kernel/scripts/runner';

const ACQUIRE = defineScript('fair-lock/acquire', acquireSource);
const ACQUIRE_FAILED = defineScript('fair-lock/acquire-failed', acquireFailedSource);
const UNLOCK = defineScript('fair-lock/unlock', unlockSource);
const FORCE_UNLOCK = defineScript('fair-lock/force-unlock', forceUnlockSource);
const TRIM = defineScript('fair-lock/trim', trimSource);

/** Error text of a refused re-acquire of a non-reentrant lock (Redisson's, verbatim). */
export const NON_REENTRANT_REACQUIRE = 'NON_REENTRANT_REACQUIRE';
const REENTRY_REFUSED = new RegExp(`^(?:ERR )?${NON_REENTRANT_REACQUIRE}\\b`);

/**
 * Longest re-check hint in ms while a fair lock is free but it is another waiter's turn. A waiter
 * that gives up in Redisson does not wake the next one, so the new head must look by itself.
 */
export const FAIR_RECHECK_MS = 1_000;

/** The keys of one fair lock: its hash, queue, deadline set and the base of its waiters' channels. */
function keysOf(name: string): [lock: string, queue: string, timeouts: string, channel: string] {
  return [name, fairLockQueue(name), fairLockTimeouts(name), lockChannel(name)];
}

/** Arguments of one fair acquire attempt. */
export interface FairAcquireRequest {
  name: string;
  owner: string;
  leaseTime: number;
  /** The waiter's slack in ms: the call's wait time, or `fairLockWaitTimeout`. */
  wait: number;
  /** See `acquireLock`: makes a re-sent attempt harmless. */
  believedHolds: number;
  /** Whether to join the queue when the lock cannot be had now (false: a single attempt). */
  enqueue: boolean;
  /** Whether the holder may re-enter; if not, its re-acquire rejects with {@link LockReentryError}. */
  reentrant: boolean;
}

/**
 * Acquires, re-enters or joins the queue; resolves `null` when acquired, else the ms after which
 * another attempt makes sense (-1: the lock is held without expiry).
 * @throws {LockReentryError} when the lock is non-reentrant and the owner holds it already.
 */
export function acquireFairLock(runner: ScriptRunner, request: FairAcquireRequest): Promise<number | null> {
  const { name, owner, leaseTime, wait, believedHolds, enqueue, reentrant } = request;
  const [lock, queue, timeouts] = keysOf(name);
  const args = [
    leaseTime,
    owner,
    wait,
    Date.now(),
    believedHolds,
    reentrant ? '' : NON_REENTRANT_REACQUIRE,
    enqueue ? '1' : '0',
    FAIR_RECHECK_MS,
  ];
  // Replica sync: only an acquisition waits (joining the queue is not waited for); one no replica
  // acknowledged is trimmed away and tried again.
  const write = acquireWrite((reply) => reply === null, () => trimFairLock(runner, name, owner, believedHolds));
  return runner.run(ACQUIRE, [lock, queue, timeouts], args, write).then(toIntegerOrNull, (error: unknown) => {
    // Redis 7 prefixes a script's bare error text with `ERR `; older servers send it as is.
    if (error instanceof Error && REENTRY_REFUSED.test(error.message)) {
      throw new LockReentryError(name, owner);
    }
    throw error;
  });
}

/**
 * Takes a waiter that gave up out of the queue and the deadline set, bringing the deadlines of the
 * waiters behind it one slack closer; resolves whether it was queued.
 */
export function fairAcquireFailed(runner: ScriptRunner, name: string, owner: string, wait: number): Promise<boolean> {
  const [lock, queue, timeouts, channel] = keysOf(name);
  return runner.runPublishing(ACQUIRE_FAILED, [queue, timeouts, lock, channel], [owner, wait, UNLOCK_MESSAGE]).then(toFlag);
}

/**
 * Releases one hold and, when the lock is free, wakes the waiter at the head of the queue. Re-running
 * it with the same request id replays the first outcome. Unlocking a lock nobody holds wakes the
 * head as Redisson does, and resolves `not-held`.
 */
export function unlockFairLock(runner: ScriptRunner, { name, owner, leaseTime, requestId }: UnlockRequest): Promise<UnlockResult> {
  const latch = unlockLatchKey(name, requestId);
  const keys = [...keysOf(name), latch];
  return runner.runPublishing(UNLOCK, keys, [UNLOCK_MESSAGE, leaseTime, owner, Date.now(), UNLOCK_LATCH_TTL], UNLOCK_WRITE, NO_ARGS, (reply) => {
    runner.latches.drop(latch);
    return toUnlockResult(reply);
  });
}

/** Deletes the lock whoever holds it and wakes the queue's head; resolves whether it existed. */
export function forceUnlockFairLock(runner: ScriptRunner, name: string): Promise<boolean> {
  return runner.runPublishing(FORCE_UNLOCK, keysOf(name), [UNLOCK_MESSAGE, Date.now()], REMOVED_WRITE).then(toFlag);
}

/**
 * Brings the owner's hold count back down to `holdsBefore`; resolves how many holds it removed.
 * Sent as text, like `trimLock`: it runs after failures, when a NOSCRIPT reply might be lost too.
 */
export async function trimFairLock(runner: ScriptRunner, name: string, owner: string, holdsBefore: number): Promise<number> {
  const publish = await runner.topology.publish.ready;
  const reply = await runner.runText(TRIM, keysOf(name), [owner, holdsBefore, UNLOCK_MESSAGE, Date.now(), publish]);
  return toInteger(reply);
}
