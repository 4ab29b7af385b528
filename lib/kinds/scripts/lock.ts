import { randomBytes } from 'node:crypto';
import acquireSource from '../../../lua/lock/acquire.lua';
import forceUnlockSource from '../../../lua/lock/force-unlock.lua';
import renewSource from '../../../lua/lock/renew.lua';
import trimSource from '../../../lua/lock/trim.lua';
import unlockSource from '../../../lua/lock/unlock.lua';
import { UNLOCK_MESSAGE, lockChannel, unlockLatchKey } from '../../keys';
import { toFlag, toFlags, toInteger, toIntegerOrNull, toStringOrNull } from '../../kernel/scripts/reply';
import { NO_ARGS, defineScript, type ScriptRunner } from '../../kernel/scripts/runner';
import { REMOVED_WRITE, RENEW_WRITE, UNLOCK_WRITE, acquireWrite } from '../../kernel/scripts/writes';

const ACQUIRE = defineScript('lock/acquire', acquireSource);
const UNLOCK = defineScript('lock/unlock', unlockSource);
const FORCE_UNLOCK = defineScript('lock/force-unlock', forceUnlockSource);
const RENEW = defineScript('lock/renew', renewSource);
const TRIM = defineScript('lock/trim', trimSource);

/**
 * How long an unlock latch outlives a call whose reply never arrived, in ms. Redisson derives 16-20 s
 * from its retry settings; a re-send of the same call (ioredis resends unanswered commands after a
 * reconnect) must land within this window to be recognised.
 */
export const UNLOCK_LATCH_TTL = 20_000;

/** Outcome of an unlock script. */
export type UnlockResult = 'released' | 'decremented' | 'not-held';

/** Arguments of one unlock call. */
export interface UnlockRequest {
  name: string;
  owner: string;
  /** Lease applied when holds remain. */
  leaseTime: number;
  /** Identifies this call across re-sends; see {@link newRequestId}. */
  requestId: string;
}

/** Random half of every request id of this process; the other half counts. */
const requestIdPrefix = randomBytes(8).toString('hex');
let requestCount = 0;

/**
 * A fresh unlock request id: 32 lowercase hex characters, as Redisson's. A per-process random
 * prefix and a counter keep ids unique without drawing entropy on every unlock.
 */
export function newRequestId(): string {
  requestCount += 1;
  return requestIdPrefix + requestCount.toString(16).padStart(16, '0');
}

/** An unlock script's reply (1, 0 or nil) as an {@link UnlockResult}. */
export function toUnlockResult(reply: unknown): UnlockResult {
  if (reply === null) return 'not-held';
  return toInteger(reply) === 1 ? 'released' : 'decremented';
}

/*
 * Typed access to a reentrant lock hash (RLock's format, shared by the spin and fenced locks).
 */

/**
 * Acquires or re-enters; resolves `null` when acquired, else the holder's PTTL (-1: no expiry).
 * `believedHolds` (the owner's holds plus its acquisitions in flight) makes a re-send harmless.
 */
export function acquireLock(
  runner: ScriptRunner,
  name: string,
  owner: string,
  leaseTime: number,
  believedHolds: number,
): Promise<number | null> {
  // Replica sync: an acquisition no replica has is taken back before it is tried again.
  const write = acquireWrite((reply) => reply === null, () => trimLock(runner, name, owner, believedHolds));
  return runner.run(ACQUIRE, [name], [leaseTime, owner, believedHolds], write, toIntegerOrNull);
}

/**
 * Brings the owner's hold count back down to `holdsBefore`; resolves how many holds it removed.
 * Sent as text: it runs after failures, when a NOSCRIPT reply might be lost too.
 */
export async function trimLock(runner: ScriptRunner, name: string, owner: string, holdsBefore: number): Promise<number> {
  const publish = await runner.topology.publish.ready;
  const reply = await runner.runText(TRIM, [name, lockChannel(name)], [owner, holdsBefore, UNLOCK_MESSAGE, publish]);
  return toInteger(reply);
}

/**
 * Releases one hold. Re-running it with the same request id replays the first outcome. Once the
 * publish command is known, the script is sent before this returns, ahead of any later command.
 */
export function unlockLock(runner: ScriptRunner, { name, owner, leaseTime, requestId }: UnlockRequest): Promise<UnlockResult> {
  const latch = unlockLatchKey(name, requestId);
  const keys = [name, lockChannel(name), latch];
  return runner.runPublishing(UNLOCK, keys, [UNLOCK_MESSAGE, leaseTime, owner, UNLOCK_LATCH_TTL], UNLOCK_WRITE, NO_ARGS, (reply) => {
    // The latch only matters to re-sends of a call whose reply was lost; this one has its answer.
    runner.latches.drop(latch);
    return toUnlockResult(reply);
  });
}

/** Deletes the lock whoever holds it and wakes a waiter; resolves whether it existed. */
export function forceUnlockLock(runner: ScriptRunner, name: string): Promise<boolean> {
  return runner.runPublishing(FORCE_UNLOCK, [name, lockChannel(name)], [UNLOCK_MESSAGE], REMOVED_WRITE).then(toFlag);
}

/** Extends each lock whose owner still holds it; resolves one flag per lock, in order. */
export function renewLocks(
  runner: ScriptRunner,
  names: readonly string[],
  owners: readonly string[],
  leaseTime: number,
): Promise<boolean[]> {
  return runner.run(RENEW, names, [leaseTime, ...owners], RENEW_WRITE).then(toFlags);
}

/** Whether anyone holds the lock. */
export function isLocked(runner: ScriptRunner, name: string): Promise<boolean> {
  return runner.redis.exists(name).then(toFlag);
}

/** The owner's hold count, 0 when it does not hold the lock. */
export function holdCount(runner: ScriptRunner, name: string, owner: string): Promise<number> {
  return runner.redis.hget(name, owner).then((reply) => Number(toStringOrNull(reply) ?? 0));
}

/** Whether the owner holds the lock. */
export function isHeldBy(runner: ScriptRunner, name: string, owner: string): Promise<boolean> {
  return runner.redis.hexists(name, owner).then(toFlag);
}

/** PTTL of a key in ms: -2 when it does not exist, -1 when it has no expiry. */
export function remainTimeToLive(runner: ScriptRunner, name: string): Promise<number> {
  return runner.redis.pttl(name).then(toInteger);
}
