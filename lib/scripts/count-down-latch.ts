import countDownSource from '../../lua/count-down-latch/count-down.lua';
import deleteSource from '../../lua/count-down-latch/delete.lua';
import trySetCountSource from '../../lua/count-down-latch/try-set-count.lua';
import { LATCH_NEW_COUNT_MESSAGE, LATCH_ZERO_MESSAGE, latchChannel } from '../keys';
import { toFlag, toInteger, toStringOrNull } from './reply';
import { defineScript, type ScriptRunner } from './runner';
import { ONCE_IF_ONE, ONCE_WRITE } from './writes';

/*
 * Replica sync: every latch write runs once (a count-down run twice counts twice; a second
 * trySetCount or delete would answer "nothing done"); when no replica acknowledges, only the WAIT
 * is repeated, then the call rejects with `ReplicaSyncError`.
 */

const TRY_SET_COUNT = defineScript('count-down-latch/try-set-count', trySetCountSource);
const COUNT_DOWN = defineScript('count-down-latch/count-down', countDownSource);
const DELETE = defineScript('count-down-latch/delete', deleteSource);

/*
 * Typed access to a count-down latch (RCountDownLatch's format): a STRING count, and
 * `redisson_countdownlatch__channel__{name}` carrying `0` at zero and `1` when set or deleted.
 */

/** Sets the count unless one is set; resolves whether it did. */
export function trySetCount(runner: ScriptRunner, name: string, count: number): Promise<boolean> {
  return runner
    .runPublishing(TRY_SET_COUNT, [name, latchChannel(name)], [LATCH_NEW_COUNT_MESSAGE, count], ONCE_IF_ONE)
    .then(toFlag);
}

/** Counts down by one; resolves the count after (0 or less: open). */
export function countDown(runner: ScriptRunner, name: string): Promise<number> {
  return runner.runPublishing(COUNT_DOWN, [name, latchChannel(name)], [LATCH_ZERO_MESSAGE], ONCE_WRITE).then(toInteger);
}

/** Deletes the latch; resolves whether it existed. */
export function deleteLatch(runner: ScriptRunner, name: string): Promise<boolean> {
  return runner.runPublishing(DELETE, [name, latchChannel(name)], [LATCH_NEW_COUNT_MESSAGE], ONCE_IF_ONE).then(toFlag);
}

/** The count (0 when unset). */
export function latchCount(runner: ScriptRunner, name: string): Promise<number> {
  return runner.redis.get(name).then((reply) => Number(toStringOrNull(reply) ?? 0));
}
