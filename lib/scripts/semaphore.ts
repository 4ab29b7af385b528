import addPermitsSource from '../../lua/semaphore/add-permits.lua';
import drainSource from '../../lua/semaphore/drain.lua';
import releaseIfExistsSource from '../../lua/semaphore/release-if-exists.lua';
import releaseSource from '../../lua/semaphore/release.lua';
import tryAcquireSource from '../../lua/semaphore/try-acquire.lua';
import trySetPermitsSource from '../../lua/semaphore/try-set-permits.lua';
import { semaphoreChannel } from '../keys';
import { toFlag, toInteger, toStringOrNull } from './reply';
import { defineScript, type ScriptRunner } from './runner';

const TRY_ACQUIRE = defineScript('semaphore/try-acquire', tryAcquireSource);
const RELEASE = defineScript('semaphore/release', releaseSource);
const RELEASE_IF_EXISTS = defineScript('semaphore/release-if-exists', releaseIfExistsSource);
const TRY_SET_PERMITS = defineScript('semaphore/try-set-permits', trySetPermitsSource);
const ADD_PERMITS = defineScript('semaphore/add-permits', addPermitsSource);
const DRAIN = defineScript('semaphore/drain', drainSource);

/*
 * Typed access to a semaphore (RSemaphore's format): a STRING count, `redisson_sc:{name}` carrying
 * the count after each change.
 */

/** Takes `permits` if that many are available; resolves whether it did. */
export function tryAcquirePermits(runner: ScriptRunner, name: string, permits: number): Promise<boolean> {
  return runner.run(TRY_ACQUIRE, [name], [permits]).then(toFlag);
}

/** Adds `permits` back and publishes the new count; resolves it. */
export function releasePermits(runner: ScriptRunner, name: string, permits: number): Promise<number> {
  return runner.runPublishing(RELEASE, [name, semaphoreChannel(name)], [permits]).then(toInteger);
}

/** Like {@link releasePermits}, but only if the semaphore exists; resolves whether it did. */
export function releasePermitsIfExists(runner: ScriptRunner, name: string, permits: number): Promise<boolean> {
  return runner.runPublishing(RELEASE_IF_EXISTS, [name, semaphoreChannel(name)], [permits]).then(toFlag);
}

/**
 * Creates the semaphore with `permits` (and a TTL of `ttl` ms, 0: none) unless it exists; also used
 * by the permit-expirable semaphore, whose `trySetPermits` has the same effect. Resolves whether it set it.
 */
export function trySetPermits(runner: ScriptRunner, name: string, permits: number, ttl: number): Promise<boolean> {
  return runner.runPublishing(TRY_SET_PERMITS, [name, semaphoreChannel(name)], [permits, ttl]).then(toFlag);
}

/** Adds `delta` (may be negative) and publishes the new count; resolves it. */
export function addPermits(runner: ScriptRunner, name: string, delta: number): Promise<number> {
  return runner.runPublishing(ADD_PERMITS, [name, semaphoreChannel(name)], [delta]).then(toInteger);
}

/** Sets the count to 0; resolves what it was. */
export function drainPermits(runner: ScriptRunner, name: string): Promise<number> {
  return runner.run(DRAIN, [name], []).then(toInteger);
}

/** The available count (0 when the semaphore does not exist). */
/** Deletes the semaphore; resolves whether it existed. */
export function deleteSemaphore(runner: ScriptRunner, name: string): Promise<boolean> {
  return runner.redis.del(name).then(toFlag);
}

export function availablePermits(runner: ScriptRunner, name: string): Promise<number> {
  return runner.redis.get(name).then((reply) => Number(toStringOrNull(reply) ?? 0));
}
