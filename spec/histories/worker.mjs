// One Node client of the history checker, in its own process: one RedissonClient on one ioredis
// connection, running the operations the runner sends (JSON lines on stdin) for several owners at once
// and reporting each one's invocation and completion on stdout, in microseconds of the machine's
// monotonic clock (CLOCK_MONOTONIC, shared by every process), so the runner can merge histories.
// Usage: node worker.mjs <redis-url> <connection-name> <lock-watchdog-ms>
import { createInterface } from 'node:readline';
import Redis from 'ioredis';
import { RedissonClient } from 'ioredisson';

const [url, connectionName, watchdog] = process.argv.slice(2);
const now = () => Number(process.hrtime.bigint() / 1000n);
const write = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);
const redis = new Redis(url, { maxRetriesPerRequest: null, connectionName });
redis.on('error', () => undefined);
const redisson = new RedissonClient(redis, { lockWatchdogTimeout: Number(watchdog) });

/** Handles held, by the id of the acquire that made them. */
const handles = new Map();

function object(kind, name) {
  switch (kind) {
    case 'lock':
      return redisson.getLock(name);
    case 'fairLock':
      return redisson.getFairLock(name);
    case 'fencedLock':
      return redisson.getFencedLock(name);
    case 'readLock':
      return redisson.getReadWriteLock(name).readLock();
    case 'writeLock':
      return redisson.getReadWriteLock(name).writeLock();
    case 'semaphore':
      return redisson.getSemaphore(name);
    case 'expirableSemaphore':
      return redisson.getPermitExpirableSemaphore(name);
    case 'latch':
      return redisson.getCountDownLatch(name);
    default:
      throw new Error(`unknown kind ${kind}`);
  }
}

/** Keeps a new handle and reports the moment its signal says the hold was lost. */
function keep(op, handle) {
  handles.set(op.id, handle);
  handle.signal.addEventListener('abort', () => {
    if (handle.signal.reason?.code === 'ERR_LOCK_LOST') write({ t: 'lost', id: op.id, at: now() });
  });
}

async function acquire(op, target) {
  const controller = new AbortController();
  const options = { waitTime: op.args.waitMs, signal: controller.signal };
  if (op.threadId !== undefined) options.threadId = op.threadId;
  if (op.args.watchdog) options.watchdog = true;
  let timer;
  if (op.args.abortMs !== undefined) timer = setTimeout(() => controller.abort(Object.assign(new Error('aborted'), { code: 'ABORTED' })), op.args.abortMs);
  try {
    const handle = op.kind === 'semaphore' || op.kind === 'expirableSemaphore' ? await target.tryAcquire(1, options) : await target.tryAcquire(options);
    if (!handle) return null;
    keep(op, handle);
    if (op.kind === 'fencedLock') return handle.fencingToken;
    if (op.kind === 'expirableSemaphore') return handle.permitId;
    return true;
  } finally {
    clearTimeout(timer);
  }
}

async function run(op) {
  const target = object(op.kind, op.name);
  const { args } = op;
  switch (op.f) {
    case 'acquire':
      return acquire(op, target);
    case 'release': {
      const handle = handles.get(args.of);
      handles.delete(args.of);
      await handle.release();
      return true;
    }
    case 'forceUnlock':
      return target.forceUnlock();
    case 'addPermits':
      await target.addPermits(args.permits);
      return null;
    case 'trySetPermits':
      return target.trySetPermits(args.permits);
    case 'drainPermits':
      return target.drainPermits();
    case 'availablePermits':
      return target.availablePermits();
    case 'delete':
      return target.delete();
    case 'trySetCount':
      return target.trySetCount(args.count);
    case 'countDown':
      await target.countDown();
      return null;
    case 'getCount':
      return target.getCount();
    case 'await':
      return target.await({ waitTime: args.waitMs });
    default:
      throw new Error(`unknown op ${op.f}`);
  }
}

async function perform(op) {
  const invoke = now();
  try {
    const value = await run(op);
    write({ t: 'op', id: op.id, invoke, complete: now(), ok: true, value: value ?? null });
  } catch (error) {
    write({ t: 'op', id: op.id, invoke, complete: now(), ok: false, error: error?.code ?? error?.message ?? String(error) });
  }
}

write({ t: 'ready', clientId: redisson.id, pid: process.pid });
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'exit') break;
  const op = JSON.parse(line);
  void perform(op);
}
await redisson.shutdown();
redis.disconnect();
