import forceUnlockSource from '../../../lua/spin-lock/force-unlock.lua';
import unlockSource from '../../../lua/spin-lock/unlock.lua';
import { unlockLatchKey } from '../../keys';
import { UNLOCK_LATCH_TTL, toUnlockResult, type UnlockRequest, type UnlockResult } from './lock';
import { REMOVED_WRITE, UNLOCK_WRITE } from '../../kernel/scripts/writes';
import { toFlag } from '../../kernel/scripts/reply';
import { defineScript, type ScriptRunner } from '../../kernel/scripts/runner';

/*
 * Typed access to a spin lock. It shares RLock's hash, so acquire, trim and renew are RLock's
 * (`./lock`); only its unlock and force-unlock differ: they never publish.
 */

const UNLOCK = defineScript('spin-lock/unlock', unlockSource);
const FORCE_UNLOCK = defineScript('spin-lock/force-unlock', forceUnlockSource);

/** Releases one hold without publishing; a re-run with the same request id replays the first outcome. */
export function unlockSpinLock(runner: ScriptRunner, { name, owner, leaseTime, requestId }: UnlockRequest): Promise<UnlockResult> {
  const latch = unlockLatchKey(name, requestId);
  return runner.run(UNLOCK, [name, latch], [leaseTime, owner, UNLOCK_LATCH_TTL], UNLOCK_WRITE).then((reply) => {
    runner.latches.drop(latch);
    return toUnlockResult(reply);
  });
}

/** Deletes the lock whoever holds it, publishing nothing; resolves whether it existed. */
export function forceUnlockSpinLock(runner: ScriptRunner, name: string): Promise<boolean> {
  return runner.run(FORCE_UNLOCK, [name], [], REMOVED_WRITE).then(toFlag);
}
