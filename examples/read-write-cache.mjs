// A read/write cache refresh. Readers render from a cached catalog under the read lock, many at
// once; a refresher rewrites the catalog under the write lock, in two steps (version, then body),
// so a reader that did not wait for it could see a version with the wrong body. None does.
// Usage: node examples/read-write-cache.mjs   (REDIS_URL, default redis://127.0.0.1:6379; `npm run build` first)
import { Redis } from 'ioredis';
import { RedissonClient } from 'ioredisson';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const cacheKey = 'example:catalog:cache';
const sleep = (/** @type {number} */ ms) => new Promise((resolve) => setTimeout(resolve, ms));

// The web tier and the refresher job have a client each, as two services would.
const webRedis = new Redis(url);
const web = new RedissonClient(webRedis);
const jobRedis = new Redis(url);
const job = new RedissonClient(jobRedis);

let readers = 0; // readers inside the read lock right now, in this process
let mostReaders = 0;
let reads = 0;
let torn = 0;
let refreshing = true;
const versionsSeen = new Set();

async function reader() {
  while (refreshing) {
    await web.getReadWriteLock('example:catalog').readLock().using(async () => {
      mostReaders = Math.max(mostReaders, ++readers);
      const [version, body] = await webRedis.hmget(cacheKey, 'version', 'body');
      await sleep(10); // rendering
      if (body !== `catalog v${version}`) torn++;
      versionsSeen.add(version);
      reads++;
      readers--;
    });
  }
}

async function refresher() {
  for (let version = 2; version <= 4; version++) {
    await sleep(40);
    await job.getReadWriteLock('example:catalog').writeLock().using(async () => {
      await jobRedis.hset(cacheKey, 'version', version);
      await sleep(20); // fetching the new catalog
      await jobRedis.hset(cacheKey, 'body', `catalog v${version}`);
    });
    console.log(`refresher: catalog v${version} written`);
  }
  refreshing = false;
}

await jobRedis.hset(cacheKey, 'version', 1, 'body', 'catalog v1');
await Promise.all([reader(), reader(), reader(), reader(), refresher()]);
console.log(`${reads} reads saw versions ${[...versionsSeen].sort().join(', ')}; up to ${mostReaders} readers at once`);
console.log(`torn reads (a version with another version's body): ${torn}`);

await jobRedis.del(cacheKey);
await Promise.all([web.shutdown(), job.shutdown()]);
webRedis.disconnect();
jobRedis.disconnect();
if (torn > 0) process.exitCode = 1;
