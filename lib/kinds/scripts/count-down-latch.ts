import countDownSource from '../../../lua/count-down-latch/count-down.lua';
import deleteSource from '../../../lua/count-down-latch/delete.lua';
import trySetCountSource from '../../../lua/count-down-latch/try-set-count.lua';
import { LATCH_NEW_COUNT_MESSAGE, LATCH_ZERO_MESSAGE, latchChannel } from '../../keys';
import { toFlag, toInteger, toStringOrNull } from '../../kernel/scripts/reply';
import { defineScript, type ReplicatedWrite, type Script, type ScriptArg, type ScriptRunner } from '../../kernel/scripts/runner';
import { ONCE_IF_ONE, ONCE_WRITE } from '../../kernel/scripts/writes';

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

/**
 * Runs a latch script that publishes `message` on the latch channel when `publishes(reply)`. Redisson's
 * channel wraps the name in braces even when it has its own, which puts it in another cluster slot
 * than the name: declared as a key, it would make the call fail with CROSSSLOT. Such a channel is
 * left out of the keys and published to after the reply instead (not atomically: a waiter that
 * misses it finds the count at its own re-check). Either way the channel is Redisson's.
 */
async function runLatch(
  runner: ScriptRunner,
  script: Script,
  name: string,
  args: readonly ScriptArg[],
  write: ReplicatedWrite,
  message: string,
  publishes: (reply: unknown) => boolean,
): Promise<unknown> {
  const channel = latchChannel(name);
  if (runner.topology.sameSlot(channel, name)) return runner.runPublishing(script, [name, channel], args, write);
  const reply = await runner.runPublishing(script, [name], args, write);
  if (publishes(reply)) await runner.topology.publishMessage(channel, message);
  return reply;
}

/** Sets the count unless one is set; resolves whether it did. */
export function trySetCount(runner: ScriptRunner, name: string, count: number): Promise<boolean> {
  const args = [LATCH_NEW_COUNT_MESSAGE, count];
  return runLatch(runner, TRY_SET_COUNT, name, args, ONCE_IF_ONE, LATCH_NEW_COUNT_MESSAGE, toFlag).then(toFlag);
}

/** Counts down by one; resolves the count after (0 or less: open). */
export function countDown(runner: ScriptRunner, name: string): Promise<number> {
  const atZero = (reply: unknown) => toInteger(reply) === 0;
  return runLatch(runner, COUNT_DOWN, name, [LATCH_ZERO_MESSAGE], ONCE_WRITE, LATCH_ZERO_MESSAGE, atZero).then(toInteger);
}

/** Deletes the latch; resolves whether it existed. */
export function deleteLatch(runner: ScriptRunner, name: string): Promise<boolean> {
  return runLatch(runner, DELETE, name, [LATCH_NEW_COUNT_MESSAGE], ONCE_IF_ONE, LATCH_NEW_COUNT_MESSAGE, toFlag).then(toFlag);
}

/** The count (0 when unset). */
export function latchCount(runner: ScriptRunner, name: string): Promise<number> {
  return runner.redis.get(name).then((reply) => Number(toStringOrNull(reply) ?? 0));
}
