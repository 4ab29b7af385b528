// A job that runs once across a fleet. Five instances of a service (each with its own connection
// and client, as separate processes would have) start the same scheduled job at about the same
// time; each makes one `tryAcquire` attempt, and only the one that gets the lock runs the job. A
// "done" marker, written under the lock, also stops an instance that starts after the job finished.
// Usage: node examples/job-once.mjs   (REDIS_URL, default redis://127.0.0.1:6379; `npm run build` first)
import { Redis } from 'ioredis';
import { RedissonClient } from 'ioredisson';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const run = 'daily-report:2026-06-01'; // one lock and one marker per scheduled run
const lockName = `example:job-once:${run}`;
const doneKey = `example:job-once:done:${run}`;
const sleep = (/** @type {number} */ ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** One instance of the fleet; resolves true if it ran the job. */
async function instance(/** @type {number} */ n, /** @type {number} */ startAfter) {
  const redis = new Redis(url);
  const redisson = new RedissonClient(redis);
  try {
    await sleep(startAfter);
    const held = await redisson.getLock(lockName).tryAcquire(); // one attempt, no waiting
    if (!held) {
      console.log(`instance ${n}: another instance is running the job, skipping`);
      return false;
    }
    try {
      if (await redis.exists(doneKey)) {
        console.log(`instance ${n}: the job already ran, skipping`);
        return false;
      }
      console.log(`instance ${n}: running the job`);
      await sleep(300); // the job itself
      held.signal.throwIfAborted(); // lost the lock meanwhile: do not claim the run
      await redis.set(doneKey, `instance ${n}`, 'EX', 24 * 3600);
      return true;
    } finally {
      await held.release();
    }
  } finally {
    await redisson.shutdown();
    redis.disconnect();
  }
}

// Four instances start within 60 ms of each other, a fifth one after the job is over.
const ran = await Promise.all([0, 20, 40, 60, 800].map((startAfter, i) => instance(i + 1, startAfter)));
const runs = ran.filter(Boolean).length;
console.log(`the job ran ${runs} time(s) across ${ran.length} instances`);

const admin = new Redis(url);
await admin.del(doneKey); // so that the example can run again
admin.disconnect();
if (runs !== 1) process.exitCode = 1;
