import type { Redis } from 'ioredis';
import { RedissonClient } from '../client';
import { READ_UNLOCK_MESSAGE, UNLOCK_MESSAGE, fairWaiterChannel } from '../keys';
import { STORAGE } from '../kinds/registry';
import { CliError, EXIT, derivedKeys, inspect, type Report } from './inspect';

/** What `force-unlock` did. */
export interface ForceUnlockResult {
  name: string;
  kind: Report['kind'];
  /** Whether there was a hold to delete. */
  unlocked: boolean;
  /** Where the unlock message went (none when there was nothing to unlock or nobody to tell). */
  published: { channel: string; message: string } | null;
  /** What was held just before. */
  before: Report;
}

/**
 * Deletes a lock whoever holds it and wakes its waiters, with the effects of Redisson's
 * forceUnlock for that kind. Semaphores and latches are refused: they have no holder to remove.
 */
export async function forceUnlock(redis: Redis, name: string): Promise<ForceUnlockResult> {
  const before = await inspect(redis, name);
  const d = derivedKeys(name);
  switch (before.kind) {
    case 'lock':
    case 'fencedLock': {
      // The library's own forceUnlock: DEL, and `0` on the lock channel if it was held (the fencing token stays).
      const redisson = new RedissonClient(redis);
      try {
        const unlocked = await redisson.getLock(name).forceUnlock();
        return { name, kind: before.kind, unlocked, published: unlocked ? { channel: d.lockChannel, message: UNLOCK_MESSAGE } : null, before };
      } finally {
        await redisson.shutdown();
      }
    }
    case 'readWriteLock':
      return optimistic(redis, [name], async () => {
        const mode = await redis.hget(name, 'mode');
        if (mode !== 'read' && mode !== 'write') return { ops: [], result: { name, kind: before.kind, unlocked: false, published: null, before } };
        // A write lock's release wakes every waiter (`1`), a read lock's one per client (`0`).
        const message = mode === 'write' ? READ_UNLOCK_MESSAGE : UNLOCK_MESSAGE;
        return {
          ops: [['del', name], ['publish', d.rwChannel, message]],
          result: { name, kind: before.kind, unlocked: true, published: { channel: d.rwChannel, message }, before },
        };
      });
    case 'fairLock':
      return optimistic(redis, [name, d.queue, d.timeout], async () => {
        // As Redisson's: drop waiters at the head whose deadline passed, delete the lock, tell the new head.
        const now = Date.now();
        const [exists, queue] = await Promise.all([redis.exists(name), redis.lrange(d.queue, 0, -1)]);
        const ops: (string | number)[][] = [];
        let head: string | undefined;
        for (const token of queue) {
          const score = await redis.zscore(d.timeout, token);
          if (score === null || Number(score) > now) {
            head = token;
            break;
          }
          ops.push(['lpop', d.queue], ['zrem', d.timeout, token]);
        }
        if (!exists) return { ops, result: { name, kind: before.kind, unlocked: false, published: null, before } };
        ops.push(['del', name]);
        const channel = head === undefined ? null : fairWaiterChannel(name, head);
        if (channel) ops.push(['publish', channel, UNLOCK_MESSAGE]);
        return { ops, result: { name, kind: before.kind, unlocked: true, published: channel ? { channel, message: UNLOCK_MESSAGE } : null, before } };
      });
    case 'fasterMultiLock':
      // Every value of the group, whoever holds it: the hash goes, and `0` wakes the waiters.
      return optimistic(redis, [name], async () => {
        const exists = (await redis.exists(name)) === 1;
        if (!exists) return { ops: [], result: { name, kind: before.kind, unlocked: false, published: null, before } };
        return {
          ops: [['del', name], ['publish', d.lockChannel, UNLOCK_MESSAGE]],
          result: { name, kind: before.kind, unlocked: true, published: { channel: d.lockChannel, message: UNLOCK_MESSAGE }, before },
        };
      });
    default:
      throw new CliError(
        `'${name}' is a ${STORAGE[before.kind].label}, which has no holder to force out`,
        EXIT.REFUSED,
        before.kind === 'countDownLatch'
          ? "Redisson's delete() opens and removes a latch; do that from your application if you mean it"
          : 'permits are given back by release(); drainPermits() or setting the counter is an application decision',
      );
  }
}

/** Runs `plan` under WATCH on `keys` and commits its writes in MULTI/EXEC; re-plans if a key changed meanwhile. */
async function optimistic(
  redis: Redis,
  keys: string[],
  plan: () => Promise<{ ops: (string | number)[][]; result: ForceUnlockResult }>,
): Promise<ForceUnlockResult> {
  const watcher = redis.duplicate();
  watcher.on('error', () => undefined);
  try {
    if (watcher.status === 'wait') await watcher.connect();
    for (let attempt = 0; attempt < 10; attempt++) {
      await watcher.watch(...keys);
      const { ops, result } = await plan();
      if (ops.length === 0) {
        await watcher.unwatch();
        return result;
      }
      const reply = await watcher.multi(ops).exec();
      if (reply !== null) {
        const failed = reply.find(([error]) => error);
        if (failed?.[0]) throw failed[0];
        return result;
      }
    }
    throw new CliError(`'${keys[0]}' kept changing while force-unlock tried to delete it; try again`, EXIT.REDIS);
  } finally {
    watcher.disconnect();
  }
}
