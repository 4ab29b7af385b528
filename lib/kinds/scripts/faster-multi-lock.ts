import acquireSource from '../../../lua/faster-multi-lock/acquire.lua';
import forceUnlockSource from '../../../lua/faster-multi-lock/force-unlock.lua';
import renewSource from '../../../lua/faster-multi-lock/renew.lua';
import stateSource from '../../../lua/faster-multi-lock/state.lua';
import trimSource from '../../../lua/faster-multi-lock/trim.lua';
import unlockSource from '../../../lua/faster-multi-lock/unlock.lua';
import { UNLOCK_MESSAGE, lockChannel, unlockLatchKey } from '../../keys';
import { toFlags, toInteger, toIntegerOrNull, toStringOrNull } from '../../kernel/scripts/reply';
import { defineScript, type ReplicatedWrite, type ScriptArg, type ScriptRunner } from '../../kernel/scripts/runner';
import { RENEW_WRITE, UNLOCK_WRITE, acquireWrite } from '../../kernel/scripts/writes';
import { UNLOCK_LATCH_TTL, toUnlockResult, type UnlockResult } from './lock';

/*
 * Typed access to a group multi-lock (Redisson's `RedissonFasterMultiLock`): one hash per group,
 * per value a field holding its owner plus the owner's `<field>:<owner>:expire_time` and
 * `<field>:<owner>:lock_count`. Expiry times are absolute, from the caller's clock, as Redisson's.
 */

const ACQUIRE = defineScript('faster-multi-lock/acquire', acquireSource);
const UNLOCK = defineScript('faster-multi-lock/unlock', unlockSource);
const TRIM = defineScript('faster-multi-lock/trim', trimSource);
const FORCE_UNLOCK = defineScript('faster-multi-lock/force-unlock', forceUnlockSource);
const RENEW = defineScript('faster-multi-lock/renew', renewSource);
const STATE = defineScript('faster-multi-lock/state', stateSource);

/** A force unlock runs once (a second run could free what others took meanwhile); it changed state when it freed a value. */
const FORCED_WRITE: ReplicatedWrite = { changed: (reply) => toInteger(reply) > 0, resend: false };

/** One owner's lock on some values of a group. */
export interface GroupValues {
  readonly group: string;
  /** The values' fields. */
  readonly fields: readonly string[];
}

/** Who holds one value: its owner token, that owner's expiry (epoch ms) and hold count. */
export interface ValueHolder {
  readonly owner: string;
  readonly expiresAt: number;
  readonly holds: number;
}

/**
 * Takes every value or none; resolves `null` when acquired, else the ms until the latest expiry among
 * the values others hold. An acquisition no replica has is taken back before it is tried again.
 */
export function acquireValues(
  runner: ScriptRunner,
  { group, fields }: GroupValues,
  owner: string,
  leaseTime: number,
  holdsBefore: number,
): Promise<number | null> {
  const write = acquireWrite(
    (reply) => reply === null,
    () => trimValues(runner, { group, fields }, owner, holdsBefore),
  );
  return runner.run(ACQUIRE, [group], [leaseTime, Date.now(), owner, ...fields], write).then(toIntegerOrNull);
}

/**
 * Brings the owner's count on each value back down to `holdsBefore`, freeing the values it then
 * holds no more; resolves how many values it changed. Sent as text: it runs after failures.
 */
export async function trimValues(
  runner: ScriptRunner,
  { group, fields }: GroupValues,
  owner: string,
  holdsBefore: number,
): Promise<number> {
  const publish = await runner.topology.publish.ready;
  const reply = await runner.runText(
    TRIM,
    [group, lockChannel(group)],
    [owner, holdsBefore, UNLOCK_MESSAGE, publish, ...fields],
  );
  return toInteger(reply);
}

/** Releases one hold on every value, or on none when the owner lacks one; a re-run with the same request id replays the first outcome. */
export function unlockValues(
  runner: ScriptRunner,
  { group, fields }: GroupValues,
  owner: string,
  leaseTime: number,
  requestId: string,
): Promise<UnlockResult> {
  const latch = unlockLatchKey(group, requestId);
  const keys = [group, lockChannel(group), latch];
  return runner
    .runPublishing(UNLOCK, keys, [owner, UNLOCK_MESSAGE, leaseTime], UNLOCK_WRITE, [
      UNLOCK_LATCH_TTL,
      Date.now(),
      ...fields,
    ])
    .then((reply) => {
      runner.latches.drop(latch);
      return toUnlockResult(reply);
    });
}

/** Frees every value whoever holds it and wakes waiters; resolves how many were held. */
export function forceUnlockValues(runner: ScriptRunner, { group, fields }: GroupValues): Promise<number> {
  return runner
    .runPublishing(FORCE_UNLOCK, [group, lockChannel(group)], [UNLOCK_MESSAGE], FORCED_WRITE, fields)
    .then(toInteger);
}

/** Extends each lock of the batch whose owner still holds all its values; one flag per lock, in order. */
export function renewValues(
  runner: ScriptRunner,
  batch: ReadonlyArray<GroupValues & { readonly owner: string }>,
  leaseTime: number,
): Promise<boolean[]> {
  const args: ScriptArg[] = [leaseTime, Date.now()];
  for (const { owner, fields } of batch) args.push(owner, fields.length, ...fields);
  return runner
    .run(
      RENEW,
      batch.map((lock) => lock.group),
      args,
      RENEW_WRITE,
    )
    .then(toFlags);
}

/** Each value's holder, in the order of `fields` (`null`: free). */
export async function valueHolders(
  runner: ScriptRunner,
  { group, fields }: GroupValues,
): Promise<Array<ValueHolder | null>> {
  const reply = (await runner.run(STATE, [group], fields)) as unknown[];
  return fields.map((_field, i) => {
    const owner = toStringOrNull(reply[3 * i]);
    if (owner === null) return null;
    return {
      owner,
      expiresAt: Number(toStringOrNull(reply[3 * i + 1]) ?? 0),
      holds: Number(toStringOrNull(reply[3 * i + 2]) ?? 0),
    };
  });
}
