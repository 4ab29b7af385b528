import { randomBytes } from 'node:crypto';
import acquireSource from '../../lua/lock/acquire.lua';
import forceUnlockSource from '../../lua/lock/force-unlock.lua';
import renewSource from '../../lua/lock/renew.lua';
import trimSource from '../../lua/lock/trim.lua';
import unlockSource from '../../lua/lock/unlock.lua';
import type { RedisConnection } from '../connection';
import { UNLOCK_MESSAGE, lockChannel, unlockLatchKey } from '../keys';
import { LatchReaper } from './latch-reaper';
import { defineScript, type ScriptRunner } from './runner';

const ACQUIRE = defineScript('lock/acquire', acquireSource);
const UNLOCK = defineScript('lock/unlock', unlockSource);
const FORCE_UNLOCK = defineScript('lock/force-unlock', forceUnlockSource);
const RENEW = defineScript('lock/renew', renewSource);
const TRIM = defineScript('lock/trim', trimSource);

/**
 * How long an unlock latch outlives a call whose reply never arrived, in ms. Redisson derives 16-20 s
 * from its retry settings; a re-send of the same call (ioredis resends unanswered commands after a
 * reconnect) must land within this window to be recognised.
 */
export const UNLOCK_LATCH_TTL = 20_000;

/** Outcome of an unlock script. */
export type UnlockResult = 'released' | 'decremented' | 'not-held';

/** Arguments of one unlock call. */
export interface UnlockRequest {
  name: string;
  owner: string;
  /** Lease applied when holds remain. */
  leaseTime: number;
  /** Identifies this call across re-sends; see {@link newRequestId}. */
  requestId: string;
}

/** Random half of every request id of this process; the other half counts. */
const requestIdPrefix = randomBytes(8).toString('hex');
let requestCount = 0;

/**
 * A fresh unlock request id: 32 lowercase hex characters, as Redisson's. A per-process random
 * prefix and a counter keep ids unique without drawing entropy on every unlock.
 */
export function newRequestId(): string {
  requestCount += 1;
  return requestIdPrefix + requestCount.toString(16).padStart(16, '0');
}

/** Typed access to a reentrant lock's state in Redis; the only way lock code talks to Redis. */
export class LockScripts {
  private readonly latches: LatchReaper;
  /** The publish command once known, so that an unlock is sent without waiting a turn. */
  private publish: 'PUBLISH' | 'SPUBLISH' | undefined;

  constructor(
    private readonly redis: RedisConnection,
    private readonly runner: ScriptRunner,
    private readonly publishCommand: Promise<'PUBLISH' | 'SPUBLISH'>,
  ) {
    this.latches = new LatchReaper(redis);
    publishCommand.then(
      (command) => (this.publish = command),
      () => undefined,
    );
  }

  /** Deletes the latches of answered unlocks still queued (the client is closing). */
  flush(): Promise<void> {
    return this.latches.flush();
  }

  /**
   * Acquires or re-enters; resolves `null` when acquired, else the holder's PTTL (-1: no expiry).
   * `believedHolds` (the owner's holds plus its acquisitions in flight) makes a re-send harmless.
   */
  acquire(name: string, owner: string, leaseTime: number, believedHolds: number): Promise<number | null> {
    return this.runner.run(ACQUIRE, [name], [leaseTime, owner, believedHolds]).then(toTtl);
  }

  /**
   * Brings the owner's hold count back down to `holdsBefore`; resolves how many holds it removed.
   * Sent as text: it runs after failures, when a NOSCRIPT reply might be lost too.
   */
  async trim(name: string, owner: string, holdsBefore: number): Promise<number> {
    const reply = await this.runner.runText(
      TRIM,
      [name, lockChannel(name)],
      [owner, holdsBefore, UNLOCK_MESSAGE, await this.publishCommand],
    );
    return Number(reply);
  }

  /**
   * Releases one hold. Re-running it with the same request id replays the first outcome. Once the
   * publish command is known, the script is sent before this returns, ahead of any later command.
   */
  unlock(request: UnlockRequest): Promise<UnlockResult> {
    if (this.publish) return this.sendUnlock(request, this.publish);
    return this.publishCommand.then((publish) => this.sendUnlock(request, publish));
  }

  private sendUnlock({ name, owner, leaseTime, requestId }: UnlockRequest, publish: string): Promise<UnlockResult> {
    const latch = unlockLatchKey(name, requestId);
    const keys = [name, lockChannel(name), latch];
    const args = [UNLOCK_MESSAGE, leaseTime, owner, publish, UNLOCK_LATCH_TTL];
    return this.runner.run(UNLOCK, keys, args).then((reply) => {
      // The latch only matters to re-sends of a call whose reply was lost; this one has its answer.
      this.latches.add(latch);
      if (reply === null) return 'not-held';
      return Number(reply) === 1 ? 'released' : 'decremented';
    });
  }

  /** Deletes the lock whoever holds it and wakes a waiter; resolves whether it existed. */
  async forceUnlock(name: string): Promise<boolean> {
    const reply = await this.runner.run(
      FORCE_UNLOCK,
      [name, lockChannel(name)],
      [UNLOCK_MESSAGE, await this.publishCommand],
    );
    return Number(reply) === 1;
  }

  /** Extends each lock whose owner still holds it; resolves one flag per lock, in order. */
  async renew(names: readonly string[], owners: readonly string[], leaseTime: number): Promise<boolean[]> {
    const reply = (await this.runner.run(RENEW, names, [leaseTime, ...owners])) as number[];
    return reply.map((renewed) => renewed === 1);
  }

  /** Whether anyone holds the lock. */
  async isLocked(name: string): Promise<boolean> {
    return (await this.redis.exists(name)) === 1;
  }

  /** The owner's hold count, 0 when it does not hold the lock. */
  async holdCount(name: string, owner: string): Promise<number> {
    return Number((await this.redis.hget(name, owner)) ?? 0);
  }

  /** Whether the owner holds the lock. */
  async isHeldBy(name: string, owner: string): Promise<boolean> {
    return (await this.redis.hexists(name, owner)) === 1;
  }

  /** PTTL of the lock in ms: -2 when free, -1 when held without expiry. */
  async remainTimeToLive(name: string): Promise<number> {
    return this.redis.pttl(name);
  }
}

/** An acquire script's reply: `null` when acquired, else the holder's PTTL. */
function toTtl(reply: unknown): number | null {
  return reply === null ? null : Number(reply);
}
