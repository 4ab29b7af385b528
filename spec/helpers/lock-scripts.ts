import type { RedisConnection } from '../../lib/connection';
import {
  acquireLock,
  forceUnlockLock,
  renewLocks,
  trimLock,
  unlockLock,
  type UnlockRequest,
} from '../../lib/kinds/scripts/lock';
import { ScriptRunner } from '../../lib/kernel/scripts/runner';
import { Topology } from '../../lib/kernel/topology/topology';

/** RLock's typed script wrappers bound to one runner, for tests that drive the scripts directly. */
export function lockScripts(runner: ScriptRunner) {
  return {
    acquire: (name: string, owner: string, leaseTime: number, believedHolds: number) =>
      acquireLock(runner, name, owner, leaseTime, believedHolds),
    unlock: (request: UnlockRequest) => unlockLock(runner, request),
    trim: (name: string, owner: string, holdsBefore: number) => trimLock(runner, name, owner, holdsBefore),
    renew: (names: string[], owners: string[], leaseTime: number) => renewLocks(runner, names, owners, leaseTime),
    forceUnlock: (name: string) => forceUnlockLock(runner, name),
    /** Deletes the latches of answered unlocks still queued. */
    flush: () => runner.flush(),
  };
}

/** The scripts of a runner publishing with PUBLISH. */
export function plainRunner(redis: RedisConnection): ScriptRunner {
  return new ScriptRunner(new Topology(redis, { shardedPubSub: 'off' }));
}

/**
 * A runner whose unlock latches are never deleted: as if every unlock reply was lost on its way
 * back, which is when a re-send needs the latch.
 */
export function lostReplyRunner(redis: RedisConnection): ScriptRunner {
  const runner = plainRunner(redis);
  runner.latches.drop = () => undefined;
  return runner;
}

export type LockScriptsUnderTest = ReturnType<typeof lockScripts>;
