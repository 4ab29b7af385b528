// simple-redis-mutex 3 on node-redis 5, at its defaults (30 s lease, 10 s safety poll). Releases
// are broadcast on one shared channel; every waiter for the released key retries on each message.
import { createClient } from 'redis';
import { lock } from 'simple-redis-mutex';

export const name = 'simple-redis-mutex';
export const pkg = 'simple-redis-mutex';
export const waiting = 'pub/sub broadcast';

export async function setup({ url }) {
  const redis = createClient({ url });
  redis.on('error', () => undefined);
  await redis.connect();
  return {
    lock: (key) => lock(redis, key),
    teardown: () => redis.close(),
  };
}
