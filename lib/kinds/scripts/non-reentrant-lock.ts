import acquireSource from '../../../lua/non-reentrant-lock/acquire.lua';
import { trimLock } from './lock';
import { acquireWrite } from '../../kernel/scripts/writes';
import { defineScript, type ScriptRunner } from '../../kernel/scripts/runner';
import { toIntegerOrNull } from '../../kernel/scripts/reply';

/*
 * Typed access to a non-reentrant lock: RLock's hash, channel and unlock (`./lock`), with an
 * acquire that refuses the holder.
 */

const ACQUIRE = defineScript('non-reentrant-lock/acquire', acquireSource);

/** Text of the error reply the acquire script gives the holder (Redisson's). */
export const NON_REENTRANT_REACQUIRE = 'NON_REENTRANT_REACQUIRE';

/** What a non-reentrant acquire found: `null` acquired, a PTTL (-1: no expiry), or `'held'` by the caller. */
export type NonReentrantAttempt = number | null | 'held';

/** Acquires unless anyone holds the lock; the caller's own hold is reported as `'held'`, not waited for. */
export function acquireNonReentrantLock(
  runner: ScriptRunner,
  name: string,
  owner: string,
  leaseTime: number,
  believedHolds: number,
): Promise<NonReentrantAttempt> {
  const write = acquireWrite((reply) => reply === null, () => trimLock(runner, name, owner, believedHolds));
  return runner.run(ACQUIRE, [name], [leaseTime, owner, believedHolds, NON_REENTRANT_REACQUIRE], write).then(
    toIntegerOrNull,
    (error: unknown) => {
      if (error instanceof Error && error.message.includes(NON_REENTRANT_REACQUIRE)) return 'held' as const;
      throw error;
    },
  );
}
