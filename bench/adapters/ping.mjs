// The floor: no lock at all, one PING where the lock would be and one where the unlock would be.
import Redis from 'ioredis';

export const name = 'PING floor';
export const pkg = 'ioredis';
export const waiting = 'n/a';
/** Not a mutex: only the uncontended scenario runs it. */
export const mutex = false;

export async function setup({ url }) {
  const redis = new Redis(url);
  return {
    async lock() {
      await redis.ping();
      return () => redis.ping();
    },
    teardown: () => redis.disconnect(),
  };
}
