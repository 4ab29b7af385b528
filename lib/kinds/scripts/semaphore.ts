import addPermitsSource from '../../../lua/semaphore/add-permits.lua';
import drainSource from '../../../lua/semaphore/drain.lua';
import releaseAndAcquireSource from '../../../lua/semaphore/release-and-acquire.lua';
import releaseIfExistsSource from '../../../lua/semaphore/release-if-exists.lua';
import releaseSource from '../../../lua/semaphore/release.lua';
import tryAcquireSource from '../../../lua/semaphore/try-acquire.lua';
import trySetPermitsSource from '../../../lua/semaphore/try-set-permits.lua';
import { semaphoreChannel } from '../../keys';
import { toFlag, toFlags, toInteger, toStringOrNull } from '../../kernel/scripts/reply';
import { NO_ARGS, defineScript, type ReplicatedWrite, type ScriptRunner } from '../../kernel/scripts/runner';
import { ONCE_IF_ONE, ONCE_WRITE } from '../../kernel/scripts/writes';

/*
 * Replica sync of the semaphore's writes (see `ReplicatedWrite`). An acquisition no replica
 * acknowledged gives its permits back (a release, which wakes waiters) and is tried again. Every other
 * write runs once: a release, an add or a drain counted twice would be wrong, and a second
 * trySetPermits would answer "already set"; when no replica acknowledges, only the WAIT is repeated.
 */

const TRY_ACQUIRE = defineScript('semaphore/try-acquire', tryAcquireSource);
const RELEASE = defineScript('semaphore/release', releaseSource);
const RELEASE_AND_ACQUIRE = defineScript('semaphore/release-and-acquire', releaseAndAcquireSource);
const RELEASE_IF_EXISTS = defineScript('semaphore/release-if-exists', releaseIfExistsSource);
const TRY_SET_PERMITS = defineScript('semaphore/try-set-permits', trySetPermitsSource);
const ADD_PERMITS = defineScript('semaphore/add-permits', addPermitsSource);
const DRAIN = defineScript('semaphore/drain', drainSource);

/*
 * Typed access to a semaphore (RSemaphore's format): a STRING count, `redisson_sc:{name}` carrying
 * the count after each change.
 */

/**
 * Takes permits for each count of `wanted`, in order, each if that many are still available (as
 * that many attempts one after another would); resolves one flag per count, or what `read` makes of
 * them.
 */
export function tryAcquirePermits(runner: ScriptRunner, name: string, wanted: readonly number[]): Promise<boolean[]>;
export function tryAcquirePermits<R>(
  runner: ScriptRunner,
  name: string,
  wanted: readonly number[],
  read: (flags: boolean[]) => R,
): Promise<R>;
export function tryAcquirePermits<R>(
  runner: ScriptRunner,
  name: string,
  wanted: readonly number[],
  read?: (flags: boolean[]) => R,
): Promise<unknown> {
  const decode: (reply: unknown) => unknown = read ? (reply) => read(toFlags(reply)) : toFlags;
  return runner.run(TRY_ACQUIRE, [name], wanted, new PermitsTaken(runner, name, wanted), decode);
}

/** An acquisition's replica sync: it changed state if it took permits; undone by giving them back. */
class PermitsTaken implements ReplicatedWrite {
  constructor(
    private readonly runner: ScriptRunner,
    private readonly name: string,
    private readonly wanted: readonly number[],
  ) {}

  changed(reply: unknown): boolean {
    return takenBy(reply, this.wanted) > 0;
  }

  undo(reply: unknown): Promise<number> {
    return releasePermits(this.runner, this.name, takenBy(reply, this.wanted), false);
  }
}

/**
 * Adds `released` permits back and, in the same script, takes permits for each count of `wanted`, in
 * order, each if that many are available then; publishes the count left only when it is positive.
 * Resolves one flag per count. Run once: when no replica acknowledges, only the WAIT is repeated, and
 * should replica sync give up, the permits taken are given back before it rejects.
 */
export function releaseAndAcquirePermits(
  runner: ScriptRunner,
  name: string,
  released: number,
  wanted: readonly number[],
): Promise<boolean[]> {
  const write: ReplicatedWrite = {
    resend: false,
    undo: (reply) => {
      const taken = takenBy(reply, wanted);
      return taken > 0 ? releasePermits(runner, name, taken, false) : Promise.resolve();
    },
  };
  return runner
    .runPublishing(RELEASE_AND_ACQUIRE, [name, semaphoreChannel(name)], [released], write, wanted)
    .then(toFlags);
}

/** Permits taken, by the flags `reply` answers for the counts of `wanted`. */
function takenBy(reply: unknown, wanted: readonly number[]): number {
  return toFlags(reply).reduce((sum, took, i) => (took ? sum + wanted[i]! : sum), 0);
}

/**
 * Adds `permits` back and publishes the new count; resolves it, or what `read` makes of it.
 * `replicated` false: no WAIT (the undo of an acquisition, which the acquisition's own round waits for).
 */
export function releasePermits(
  runner: ScriptRunner,
  name: string,
  permits: number,
  replicated?: boolean,
): Promise<number>;
export function releasePermits<R>(
  runner: ScriptRunner,
  name: string,
  permits: number,
  replicated: boolean,
  read: (count: number) => R,
): Promise<R>;
export function releasePermits<R>(
  runner: ScriptRunner,
  name: string,
  permits: number,
  replicated = true,
  read?: (count: number) => R,
): Promise<unknown> {
  const write = replicated ? ONCE_WRITE : undefined;
  const keys = [name, semaphoreChannel(name)];
  const decode: (reply: unknown) => unknown = read ? (reply) => read(toInteger(reply)) : toInteger;
  return runner.runPublishing(RELEASE, keys, [permits], write, NO_ARGS, decode);
}

/** Like {@link releasePermits}, but only if the semaphore exists; resolves whether it did. */
export function releasePermitsIfExists(runner: ScriptRunner, name: string, permits: number): Promise<boolean> {
  return runner.runPublishing(RELEASE_IF_EXISTS, [name, semaphoreChannel(name)], [permits], ONCE_IF_ONE).then(toFlag);
}

/**
 * Creates the semaphore with `permits` (and a TTL of `ttl` ms, 0: none) unless it exists; also used
 * by the permit-expirable semaphore, whose `trySetPermits` has the same effect. Resolves whether it set it.
 */
export function trySetPermits(runner: ScriptRunner, name: string, permits: number, ttl: number): Promise<boolean> {
  return runner
    .runPublishing(TRY_SET_PERMITS, [name, semaphoreChannel(name)], [permits, ttl], ONCE_IF_ONE)
    .then(toFlag);
}

/** Adds `delta` (may be negative) and publishes the new count; resolves it. */
export function addPermits(runner: ScriptRunner, name: string, delta: number): Promise<number> {
  return runner.runPublishing(ADD_PERMITS, [name, semaphoreChannel(name)], [delta], ONCE_WRITE).then(toInteger);
}

/** Sets the count to 0; resolves what it was. */
export function drainPermits(runner: ScriptRunner, name: string): Promise<number> {
  return runner.run(DRAIN, [name], [], { changed: (reply) => toInteger(reply) !== 0, resend: false }).then(toInteger);
}

/** Deletes the semaphore; resolves whether it existed. */
export function deleteSemaphore(runner: ScriptRunner, name: string): Promise<boolean> {
  return runner.redis.del(name).then(toFlag);
}

/** The available count (0 when the semaphore does not exist). */
export function availablePermits(runner: ScriptRunner, name: string): Promise<number> {
  return runner.redis.get(name).then((reply) => Number(toStringOrNull(reply) ?? 0));
}
