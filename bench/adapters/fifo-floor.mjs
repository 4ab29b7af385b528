// FIFO floor: the least a first-come, first-served lock over pub/sub does per hand-off, on bare
// ioredis, as a bound for the fair lock's figures (not a peer: no lease renewal, no re-entry, no
// unlock latch, no purge of a dead head, standalone Redis only). One script takes the lock for the
// queue's head, or for anyone while nobody queues, and queues everyone else once; the unlock deletes
// it and publishes the head's id to the head's process, which subscribed its channel once at set-up.
import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';

export const name = 'FIFO floor';
export const pkg = 'ioredis';
export const waiting = 'pub/sub, the next waiter only';
/** A bound, not a peer: the targets' "every peer" leaves it out. */
export const floor = true;

const CHANNEL = 'bench-fifo-floor:';

const ACQUIRE = `
local head = redis.call('lindex', KEYS[2], 0)
if redis.call('exists', KEYS[1]) == 0 and (not head or head == ARGV[1]) then
  if head then redis.call('lpop', KEYS[2]) end
  redis.call('set', KEYS[1], ARGV[1], 'px', 30000)
  return 1
end
if not redis.call('lpos', KEYS[2], ARGV[1]) then redis.call('rpush', KEYS[2], ARGV[1]) end
return 0`;

const UNLOCK = `
if redis.call('get', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('del', KEYS[1])
local head = redis.call('lindex', KEYS[2], 0)
if head then redis.call('publish', ARGV[2] .. string.match(head, '^([^:]+)'), head) end
return 1`;

export async function setup({ url }) {
  const redis = new Redis(url);
  const subscriber = new Redis(url);
  redis.defineCommand('fifoAcquire', { numberOfKeys: 2, lua: ACQUIRE });
  redis.defineCommand('fifoUnlock', { numberOfKeys: 2, lua: UNLOCK });
  const processId = randomBytes(8).toString('hex');
  await subscriber.subscribe(CHANNEL + processId);
  let next = 0;
  /** Parked waiters by id, and ids whose turn came before they parked. */
  const parked = new Map();
  const early = new Set();
  subscriber.on('message', (_channel, id) => {
    const wake = parked.get(id);
    if (!wake) return void early.add(id);
    parked.delete(id);
    wake();
  });
  return {
    async lock(key) {
      const id = `${processId}:${next++}`;
      const queue = `${key}:fifo-queue`;
      while ((await redis.fifoAcquire(key, queue, id)) !== 1) {
        if (early.delete(id)) continue;
        await new Promise((resolve) => parked.set(id, resolve));
      }
      return () => redis.fifoUnlock(key, queue, id, CHANNEL);
    },
    diagnostics: () => ({ waiters: parked.size }),
    teardown: () => {
      subscriber.disconnect();
      redis.disconnect();
    },
  };
}
