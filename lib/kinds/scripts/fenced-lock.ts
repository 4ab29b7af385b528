import acquireSource from '../../../lua/fenced-lock/acquire.lua';
import deleteSource from '../../../lua/fenced-lock/delete.lua';
import { UNLOCK_MESSAGE, fencingTokenKey, lockChannel } from '../../keys';
import { toFlag, toIntegers, toStringOrNull } from '../../kernel/scripts/reply';
import { trimLock } from './lock';
import { REMOVED_WRITE, acquireWrite } from '../../kernel/scripts/writes';
import { defineScript, type ScriptRunner } from '../../kernel/scripts/runner';

/*
 * Typed access to a fenced lock: RLock's hash (unlock, trim, renew and force-unlock are RLock's,
 * in `./lock`) plus the token counter `redisson_lock_token:{name}`.
 */

const ACQUIRE = defineScript('fenced-lock/acquire', acquireSource);
const DELETE = defineScript('fenced-lock/delete', deleteSource);

/** What a fenced acquire found: the token drawn, or the holder's PTTL (-1: no expiry). */
export type FencedAttempt = { acquired: true; token: number } | { acquired: false; ttl: number };

/**
 * Acquires or re-enters, drawing a new token from the counter on success. `believedHolds` makes a
 * re-send harmless (it draws no second token).
 */
export function acquireFencedLock(
  runner: ScriptRunner,
  name: string,
  owner: string,
  leaseTime: number,
  believedHolds: number,
): Promise<FencedAttempt> {
  // Replica sync: an acquisition no replica has is trimmed away (RLock's trim; the token it drew stays
  // used, tokens only grow) and tried again, drawing a new token.
  const write = acquireWrite((reply) => toIntegers(reply)[0] === 0, () => trimLock(runner, name, owner, believedHolds));
  return runner.run(ACQUIRE, [name, fencingTokenKey(name)], [leaseTime, owner, believedHolds], write).then((reply) => {
    const [status, value] = toIntegers(reply);
    if (value === undefined) throw new TypeError('Expected a two-element reply from the fenced acquire script');
    return status === 0 ? { acquired: true, token: value } : { acquired: false, ttl: value };
  });
}

/** The last token drawn, `null` when the lock was never acquired (or was deleted). */
export function currentFencingToken(runner: ScriptRunner, name: string): Promise<number | null> {
  return runner.redis.get(fencingTokenKey(name)).then((reply) => {
    const text = toStringOrNull(reply);
    return text === null ? null : Number(text);
  });
}

/** Deletes the lock and its token counter, waking a waiter if it was held; resolves whether either existed. */
export function deleteFencedLock(runner: ScriptRunner, name: string): Promise<boolean> {
  return runner
    .runPublishing(DELETE, [name, fencingTokenKey(name), lockChannel(name)], [UNLOCK_MESSAGE], REMOVED_WRITE)
    .then(toFlag);
}
