// The API from TypeScript (strict, `module: nodenext`): typed options, handles and events, a
// generic `using()`, and errors told apart by class or by their `code`.
// Usage: compile it in an ES module project ("type": "module", for the top-level await) and run the
//   output with node (REDIS_URL, default redis://127.0.0.1:6379).
import { Redis } from 'ioredis';
import {
  LockAcquireTimeoutError,
  RedissonClient,
  RedissonError,
  type Handle,
  type RedissonErrorCode,
  type RedissonOptions,
} from 'ioredisson';

const options: RedissonOptions = { lockWatchdogTimeout: 10_000 };
const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const redisson = new RedissonClient(redis, options);
redisson.on('released', ({ name, fully }) => console.log(`released ${name}${fully ? '' : ' (still held)'}`));

interface Invoice { order: number; total: number }

/** Runs `work` under the order's lock; `using()` returns what `work` returns, typed. */
function withOrder<T>(order: number, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  return redisson.getLock(`example:typed:order:${order}`).using(work, { waitTime: 1_000 });
}

/** What to tell a caller, from any error this library throws: `code` is a closed union. */
function explain(error: unknown): string {
  if (!(error instanceof RedissonError)) throw error;
  const code: RedissonErrorCode = error.code;
  switch (code) {
    case 'ERR_LOCK_ACQUIRE_TIMEOUT': return 'busy, try again later';
    case 'ERR_LOCK_LOST': case 'ERR_LOCK_NOT_HELD': return 'lost the lock: the result is not trusted';
    default: return `failed (${code})`;
  }
}

const invoice: Invoice = await withOrder(7, async (signal) => {
  signal.throwIfAborted();
  return { order: 7, total: 42 };
});
console.log(`invoice for order ${invoice.order}: ${invoice.total}`);

// While a handle holds order 7, another caller times out: a LockAcquireTimeoutError.
const held: Handle = await redisson.getLock('example:typed:order:7').acquire();
try {
  await withOrder(7, async () => 'never');
} catch (error) {
  console.log(`second caller: ${explain(error)} (timeout: ${error instanceof LockAcquireTimeoutError})`);
} finally {
  await held.release();
}

await redisson.shutdown();
redis.disconnect();
