// node-redisson at its defaults (pub/sub events, 30 s watchdog). Owners are per lock object, so
// every acquisition takes a fresh one. It opens its own two ioredis connections.
import { Redisson } from 'node-redisson';

export const name = 'node-redisson';
export const pkg = 'node-redisson';
export const waiting = 'pub/sub wake-up';

export async function setup({ url }) {
  const { hostname, port } = new URL(url);
  const redisson = new Redisson({ redis: { options: { host: hostname, port: Number(port) } } });
  return {
    async lock(key) {
      const lock = redisson.getLock(key);
      await lock.lock();
      return () => lock.unlock();
    },
    teardown: () => redisson.quit(),
  };
}
