import addPermitsSource from '../../../lua/permit-expirable-semaphore/add-permits.lua';
import countsSource from '../../../lua/permit-expirable-semaphore/counts.lua';
import leaseTimeSource from '../../../lua/permit-expirable-semaphore/lease-time.lua';
import releaseManySource from '../../../lua/permit-expirable-semaphore/release-many.lua';
import releaseSource from '../../../lua/permit-expirable-semaphore/release.lua';
import renewSource from '../../../lua/permit-expirable-semaphore/renew.lua';
import setPermitsSource from '../../../lua/permit-expirable-semaphore/set-permits.lua';
import tryAcquireSource from '../../../lua/permit-expirable-semaphore/try-acquire.lua';
import updateLeaseSource from '../../../lua/permit-expirable-semaphore/update-lease.lua';
import { PERMIT_NO_EXPIRY, permitTimeoutKey, semaphoreChannel } from '../../keys';
import { toFlag, toFlags, toInteger, toStringOrNull } from '../../kernel/scripts/reply';
import { NO_ARGS, defineScript, type ReplicatedWrite, type ScriptArg, type ScriptRunner } from '../../kernel/scripts/runner';
import { ONCE_IF_ONE, ONCE_WRITE, RENEW_WRITE } from '../../kernel/scripts/writes';

const TRY_ACQUIRE = defineScript('permit-expirable-semaphore/try-acquire', tryAcquireSource);
const RELEASE = defineScript('permit-expirable-semaphore/release', releaseSource);
const RELEASE_MANY = defineScript('permit-expirable-semaphore/release-many', releaseManySource);
const COUNTS = defineScript('permit-expirable-semaphore/counts', countsSource);
const SET_PERMITS = defineScript('permit-expirable-semaphore/set-permits', setPermitsSource);
const ADD_PERMITS = defineScript('permit-expirable-semaphore/add-permits', addPermitsSource);
const UPDATE_LEASE = defineScript('permit-expirable-semaphore/update-lease', updateLeaseSource);
const LEASE_TIME = defineScript('permit-expirable-semaphore/lease-time', leaseTimeSource);
const RENEW = defineScript('permit-expirable-semaphore/renew', renewSource);

/*
 * Typed access to a permit-expirable semaphore (RPermitExpirableSemaphore's format): a STRING
 * count of available permits, the ZSET `{name}:timeout` of acquired permit ids (16 raw bytes each)
 * scored by expiry (epoch ms, or 922337203685477 for none), and `redisson_sc:{name}`. Every time
 * argument is this host's wall clock, as Redisson's are.
 */

/** What an acquire attempt found. */
export type PermitAttempt =
  | { acquired: true }
  /** Not acquired; `earliestExpiry`: epoch ms when the first acquired permit expires, if any does. */
  | { acquired: false; earliestExpiry: number | undefined };

function keysOf(name: string): [string, string, string] {
  return [name, permitTimeoutKey(name), semaphoreChannel(name)];
}

/**
 * Acquires `ids.length` permits under `ids`, expiring at `expiry` (epoch ms; `undefined`: never),
 * after reclaiming up to that many expired permits.
 */
export function tryAcquireExpirable(
  runner: ScriptRunner,
  name: string,
  ids: readonly Buffer[],
  expiry: number | undefined,
  now: number,
): Promise<PermitAttempt> {
  const args: ScriptArg[] = [ids.length, expiry ?? PERMIT_NO_EXPIRY, now, PERMIT_NO_EXPIRY, ...ids];
  // Replica sync: permits no replica acknowledged are released by id and acquired again, same ids.
  const write: ReplicatedWrite = {
    changed: (reply) => toStringOrNull(reply) === 'OK',
    undo: () => releaseManyExpirable(runner, name, ids, Date.now(), false),
  };
  return runner.runPublishing(TRY_ACQUIRE, keysOf(name), args, write, NO_ARGS, toPermitAttempt);
}

const ACQUIRED: PermitAttempt = Object.freeze({ acquired: true });
const REFUSED: PermitAttempt = Object.freeze({ acquired: false, earliestExpiry: undefined });

/** An acquire script's reply: `OK`, `:<earliest expiry>` or nil. */
function toPermitAttempt(raw: unknown): PermitAttempt {
  const reply = toStringOrNull(raw);
  if (reply === 'OK') return ACQUIRED;
  if (reply === null) return REFUSED;
  if (!reply.startsWith(':')) throw new TypeError(`Unexpected acquire reply from Redis: ${JSON.stringify(reply.slice(0, 40))}`);
  return { acquired: false, earliestExpiry: toInteger(reply.slice(1)) };
}

/**
 * Releases one permit; resolves `true` if it was held and not expired. An expired permit still
 * there is released all the same, resolving `false` (Redisson's rule).
 */
export function releaseExpirable(runner: ScriptRunner, name: string, id: Buffer, now: number): Promise<boolean> {
  const [key, zset, channel] = keysOf(name);
  // Runs once (a second run would answer "not held"); its reply 0 may still mean released (expired).
  return runner.runPublishing(RELEASE, [key, channel, zset], [id, 1, now], ONCE_WRITE, NO_ARGS, toFlag);
}

/**
 * Releases every permit of `ids`, or none if one is missing or expired; resolves how many it released.
 * `replicated` false: no WAIT (the undo of an acquisition, which the acquisition's round waits for).
 */
export function releaseManyExpirable(
  runner: ScriptRunner,
  name: string,
  ids: readonly Buffer[],
  now: number,
  replicated = true,
): Promise<number> {
  const [key, zset, channel] = keysOf(name);
  const write: ReplicatedWrite | undefined = replicated ? { changed: (reply) => toInteger(reply) > 0, resend: false } : undefined;
  return runner.runPublishing(RELEASE_MANY, [key, channel, zset], [ids.length, now, ...ids], write, NO_ARGS, toInteger);
}

/** Counts after reclaiming expired permits. */
export interface PermitCounts {
  exists: boolean;
  available: number;
  acquired: number;
}

/** Reclaims expired permits and reads the counts. */
export async function permitCounts(runner: ScriptRunner, name: string, now: number): Promise<PermitCounts> {
  const reply = await runner.runPublishing(COUNTS, keysOf(name), [now]);
  if (!Array.isArray(reply) || reply.length !== 3) throw new TypeError('Expected a 3-element array reply from Redis');
  return { exists: toFlag(reply[0]), available: toInteger(reply[1]), acquired: toInteger(reply[2]) };
}

/** Makes available + acquired equal `permits`; resolves whether anything changed. */
/** Deletes the semaphore and its acquired permits; resolves whether either existed. */
export function deleteExpirable(runner: ScriptRunner, name: string): Promise<boolean> {
  return runner.redis.del(name, permitTimeoutKey(name)).then((deleted) => toInteger(deleted) > 0);
}

export function setExpirablePermits(runner: ScriptRunner, name: string, permits: number): Promise<boolean> {
  const [key, zset, channel] = keysOf(name);
  return runner.runPublishing(SET_PERMITS, [key, channel, zset], [permits], ONCE_IF_ONE).then(toFlag);
}

/** Adds `delta` available permits (publishing it if positive); resolves the new count. */
export function addExpirablePermits(runner: ScriptRunner, name: string, delta: number): Promise<number> {
  const [key, , channel] = keysOf(name);
  return runner.runPublishing(ADD_PERMITS, [key, channel], [delta], ONCE_WRITE).then(toInteger);
}

/** Gives an acquired permit the expiry `expiry` (epoch ms, or never); resolves whether it exists. */
export function updatePermitExpiry(
  runner: ScriptRunner,
  name: string,
  id: Buffer,
  expiry: number | undefined,
  now: number,
): Promise<boolean> {
  // Idempotent (the same score again): re-sent as is.
  const write: ReplicatedWrite = { changed: (reply) => toFlag(reply) };
  return runner.runPublishing(UPDATE_LEASE, keysOf(name), [id, expiry ?? PERMIT_NO_EXPIRY, now], write).then(toFlag);
}

/** Ms left on a permit's lease: -1 never expires, 0 no such permit. */
export function permitLeaseTime(runner: ScriptRunner, name: string, id: Buffer, now: number): Promise<number> {
  return runner.runPublishing(LEASE_TIME, keysOf(name), [id, PERMIT_NO_EXPIRY, now]).then(toInteger);
}

/** One group of permits a lease keeps alive. */
export interface PermitGroup {
  name: string;
  ids: readonly Buffer[];
}

/**
 * Extends each group whose permits are all still acquired and unexpired to `now + leaseTime`;
 * resolves one flag per group. Groups of one call must share a cluster slot.
 */
export function renewPermits(runner: ScriptRunner, groups: readonly PermitGroup[], leaseTime: number, now: number): Promise<boolean[]> {
  const args: ScriptArg[] = [now + leaseTime, now];
  for (const group of groups) args.push(group.ids.length, ...group.ids);
  return runner.run(RENEW, groups.map((group) => permitTimeoutKey(group.name)), args, RENEW_WRITE).then(toFlags);
}
