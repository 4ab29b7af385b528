import { toFlag, toFlags } from './reply';
import type { ReplicatedWrite } from './runner';

/*
 * Replica sync (see `ReplicatedWrite`): the shapes of write the primitives' wrappers declare.
 */

/**
 * An unlock (any kind with an unlock latch) is re-sent with the same request id when no replica has
 * it: the latch replays the first outcome, so the re-send changes nothing and answers the same.
 */
export const UNLOCK_WRITE: ReplicatedWrite = { changed: (reply) => reply !== null };
/**
 * A force-unlock or delete that removed something is not run again (a second run would delete a lock
 * taken meanwhile by someone else, and would answer "nothing there"): only the WAIT is repeated.
 */
export const REMOVED_WRITE: ReplicatedWrite = { changed: (reply) => toFlag(reply), resend: false };
/** A renewal round that extended a lease is re-sent as is (it extends only holds still there). */
export const RENEW_WRITE: ReplicatedWrite = { changed: (reply) => toFlags(reply).some(Boolean) };

/**
 * An acquisition that succeeded when `acquired(reply)`; a round no replica acknowledged is taken
 * back by `undo` (the kind's trim script, down to the holds believed before) and tried again.
 */
export function acquireWrite(acquired: (reply: unknown) => boolean, undo: () => Promise<unknown>): ReplicatedWrite {
  return { changed: acquired, undo };
}

/**
 * A write that must run once (a permit release, an add, a count-down: a second run counts twice),
 * waited for whatever its reply; when no replica acknowledges, only the WAIT is repeated.
 */
export const ONCE_WRITE: ReplicatedWrite = { resend: false };
/**
 * A write that changed something when its reply is 1 (trySetPermits, trySetCount, delete), waited
 * for only then and never run again (a second run would answer "nothing done").
 */
export const ONCE_IF_ONE: ReplicatedWrite = { changed: (reply) => toFlag(reply), resend: false };
