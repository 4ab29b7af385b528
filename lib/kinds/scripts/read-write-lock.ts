import forceUnlockSource from '../../../lua/read-write-lock/force-unlock.lua';
import isLockedSource from '../../../lua/read-write-lock/is-locked.lua';
import readAcquireSource from '../../../lua/read-write-lock/read-acquire.lua';
import readRenewSource from '../../../lua/read-write-lock/read-renew.lua';
import readTrimSource from '../../../lua/read-write-lock/read-trim.lua';
import readUnlockSource from '../../../lua/read-write-lock/read-unlock.lua';
import writeAcquireSource from '../../../lua/read-write-lock/write-acquire.lua';
import writeTrimSource from '../../../lua/read-write-lock/write-trim.lua';
import writeUnlockSource from '../../../lua/read-write-lock/write-unlock.lua';
import {
  READ_UNLOCK_MESSAGE,
  UNLOCK_MESSAGE,
  readTimeoutKeyPrefix,
  readWriteLockChannel,
  readerTimeoutPrefix,
  unlockLatchKey,
} from '../../keys';
import { UNLOCK_LATCH_TTL, toUnlockResult, type UnlockRequest, type UnlockResult } from './lock';
import { REMOVED_WRITE, RENEW_WRITE, UNLOCK_WRITE, acquireWrite as acquisition } from '../../kernel/scripts/writes';
import { toFlag, toFlags, toInteger, toIntegerOrNull } from '../../kernel/scripts/reply';
import { NO_ARGS, defineScript, type ScriptArg, type ScriptRunner } from '../../kernel/scripts/runner';

const READ_ACQUIRE = defineScript('read-write-lock/read-acquire', readAcquireSource);
const READ_UNLOCK = defineScript('read-write-lock/read-unlock', readUnlockSource);
const READ_RENEW = defineScript('read-write-lock/read-renew', readRenewSource);
const READ_TRIM = defineScript('read-write-lock/read-trim', readTrimSource);
const WRITE_ACQUIRE = defineScript('read-write-lock/write-acquire', writeAcquireSource);
const WRITE_UNLOCK = defineScript('read-write-lock/write-unlock', writeUnlockSource);
const WRITE_TRIM = defineScript('read-write-lock/write-trim', writeTrimSource);
const FORCE_UNLOCK = defineScript('read-write-lock/force-unlock', forceUnlockSource);
const IS_LOCKED = defineScript('read-write-lock/is-locked', isLockedSource);

/** Which of the two locks of a read/write lock. */
export type ReadWriteMode = 'read' | 'write';

/*
 * Typed access to a read/write lock hash (Redisson's RReadWriteLock format): field `mode`, reader
 * fields `<clientId>:<threadId>`, the writer field `<clientId>:<threadId>:write`, and one timeout key
 * per read hold.
 */

/**
 * Takes one read hold for `reader`; resolves `null` when acquired, else the hash's PTTL.
 * `writer` is the same thread's writer token (its read holds are allowed while it writes).
 */
export function acquireRead(
  runner: ScriptRunner,
  name: string,
  reader: string,
  writer: string,
  leaseTime: number,
  believedHolds: number,
): Promise<number | null> {
  const keys = [name, readerTimeoutPrefix(name, reader)];
  const write = acquisition((reply) => reply === null, () => trimRead(runner, name, reader, believedHolds));
  return runner.run(READ_ACQUIRE, keys, [leaseTime, reader, writer, believedHolds], write, toIntegerOrNull);
}

/** Releases one read hold of `owner` (the reader token); the lease is not used (holds keep their own). */
export function unlockRead(runner: ScriptRunner, { name, owner, requestId }: UnlockRequest): Promise<UnlockResult> {
  const latch = unlockLatchKey(name, requestId);
  const keys = [name, readWriteLockChannel(name), readerTimeoutPrefix(name, owner), readTimeoutKeyPrefix(name), latch];
  return runner.runPublishing(READ_UNLOCK, keys, [UNLOCK_MESSAGE, owner, UNLOCK_LATCH_TTL], UNLOCK_WRITE, NO_ARGS, (reply) => {
    runner.latches.drop(latch);
    return toUnlockResult(reply);
  });
}

/** Brings the reader's holds back down to `holdsBefore`; resolves how many it removed. Sent as text. */
export async function trimRead(runner: ScriptRunner, name: string, reader: string, holdsBefore: number): Promise<number> {
  const publish = await runner.topology.publish.ready;
  const keys = [name, readWriteLockChannel(name), readerTimeoutPrefix(name, reader)];
  return toInteger(await runner.runText(READ_TRIM, keys, [reader, holdsBefore, UNLOCK_MESSAGE, publish]));
}

/** Takes one write hold for `writer` (a `…:write` token); resolves `null` when acquired, else the PTTL. */
export function acquireWrite(
  runner: ScriptRunner,
  name: string,
  writer: string,
  leaseTime: number,
  believedHolds: number,
): Promise<number | null> {
  const write = acquisition((reply) => reply === null, () => trimWrite(runner, name, writer, believedHolds));
  return runner.run(WRITE_ACQUIRE, [name], [leaseTime, writer, believedHolds], write, toIntegerOrNull);
}

/** Releases one write hold; the last one publishes `1`, which wakes every waiter. */
export function unlockWrite(runner: ScriptRunner, { name, owner, leaseTime, requestId }: UnlockRequest): Promise<UnlockResult> {
  const latch = unlockLatchKey(name, requestId);
  const keys = [name, readWriteLockChannel(name), latch];
  return runner.runPublishing(WRITE_UNLOCK, keys, [READ_UNLOCK_MESSAGE, leaseTime, owner, UNLOCK_LATCH_TTL], UNLOCK_WRITE, NO_ARGS, (reply) => {
    runner.latches.drop(latch);
    return toUnlockResult(reply);
  });
}

/** Brings the writer's holds back down to `holdsBefore`; resolves how many it removed. Sent as text. */
export async function trimWrite(runner: ScriptRunner, name: string, writer: string, holdsBefore: number): Promise<number> {
  const publish = await runner.topology.publish.ready;
  const keys = [name, readWriteLockChannel(name)];
  return toInteger(await runner.runText(WRITE_TRIM, keys, [writer, holdsBefore, READ_UNLOCK_MESSAGE, publish]));
}

/** Deletes the lock if it is in `mode`, publishing `0` (read) or `1` (write); resolves whether it did. */
export function forceUnlockReadWrite(runner: ScriptRunner, name: string, mode: ReadWriteMode): Promise<boolean> {
  const message = mode === 'read' ? UNLOCK_MESSAGE : READ_UNLOCK_MESSAGE;
  return runner.runPublishing(FORCE_UNLOCK, [name, readWriteLockChannel(name)], [mode, message], REMOVED_WRITE).then(toFlag);
}

/** Whether the lock is held by a reader (`read`) or by the writer (`write`), by Redisson's rule. */
export function isReadWriteLocked(runner: ScriptRunner, name: string, mode: ReadWriteMode): Promise<boolean> {
  return runner.run(IS_LOCKED, [name], [mode]).then(toFlag);
}

/** One lock's readers to renew: every reader token this client holds it with. */
export interface ReadRenewal {
  name: string;
  readers: readonly string[];
}

/**
 * Extends only the given readers' holds (their timeout keys, and the hash while one of them is
 * alive); resolves one flag per reader token, in order of `locks` then `readers`.
 */
export function renewReads(runner: ScriptRunner, locks: readonly ReadRenewal[], leaseTime: number): Promise<boolean[]> {
  const keys: string[] = [];
  const args: ScriptArg[] = [leaseTime];
  for (const { name, readers } of locks) {
    keys.push(name, readTimeoutKeyPrefix(name));
    args.push(readers.length, ...readers);
  }
  return runner.run(READ_RENEW, keys, args, RENEW_WRITE).then(toFlags);
}
