import type Redis from 'ioredis';
import type { RedisOptions } from 'ioredis';
import { RedissonClient, type RedissonOptions } from '../../lib';
import { startRedis, type TestRedis } from './redis-server';

/**
 * Per-file set-up: one throwaway Redis for the file, flushed (keys and scripts) before each test, and clients that are
 * shut down after each test. Asserts that no client leaves a subscription or a tracked lease behind.
 */
export function useRedis(): {
  server: () => TestRedis;
  admin: () => Redis;
  client: (options?: RedissonOptions, connection?: RedisOptions) => RedissonClient;
} {
  let server: TestRedis;
  let admin: Redis;
  let clients: RedissonClient[] = [];

  beforeAll(async () => {
    server = await startRedis();
    admin = server.connect();
  });
  beforeEach(async () => {
    // Keys and cached scripts alike: a test that counts EVALSHA calls must not depend on which
    // tests ran before it.
    await admin.flushall();
    await admin.script('FLUSH');
  });
  afterEach(async () => {
    await Promise.all(clients.map((c) => c.shutdown()));
    clients = [];
  });
  afterAll(async () => {
    await server.stop();
  });

  return {
    server: () => server,
    admin: () => admin,
    client: (options, connection) => {
      const client = new RedissonClient(server.connect(connection), options);
      clients.push(client);
      return client;
    },
  };
}

/** Resolves after `ms`. */
export const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** `promise`, or a rejection with `message` once `ms` pass first; the timer is cleared either way. */
export async function within<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeUp = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  try {
    return await Promise.race([promise, timeUp]);
  } finally {
    clearTimeout(timer);
  }
}
