// An HTTP handler with an owner scope per request. Every request runs in `redisson.run()`, so the
// locks it takes belong to that request: a helper that locks the cart again, inside the handler's
// hold, re-enters; two requests for the same cart exclude each other, in one process as across many.
// The script starts a server on a free port, sends four concurrent requests to itself and exits.
// Usage: node examples/http-owner-scope.mjs   (REDIS_URL, default redis://127.0.0.1:6379; `npm run build` first)
import { createServer } from 'node:http';
import { Redis } from 'ioredis';
import { RedissonClient } from 'ioredisson';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const redisson = new RedissonClient(redis);
const sleep = (/** @type {number} */ ms) => new Promise((resolve) => setTimeout(resolve, ms));
let inside = 0; // requests inside the critical section right now
let mostInside = 0;

/** Called with the cart lock already held by the handler: the same owner, so this re-enters. */
async function addItem(/** @type {string} */ cart, /** @type {string} */ item) {
  const lock = redisson.getLock(`example:cart:${cart}:lock`);
  await lock.lock();
  try {
    await redis.rpush(`example:cart:${cart}`, item);
    return await lock.getHoldCount(); // 2: the handler's hold and this one
  } finally {
    await lock.unlock();
  }
}

const server = createServer((request, response) =>
  redisson.run(async () => {
    const item = new URL(request.url ?? '/', 'http://localhost').searchParams.get('item') ?? '?';
    const lock = redisson.getLock('example:cart:42:lock');
    await lock.lock();
    try {
      mostInside = Math.max(mostInside, ++inside);
      const holds = await addItem('42', item);
      await sleep(50); // the rest of the request's work
      inside--;
      response.end(`added ${item} (hold count inside the helper: ${holds})`);
    } finally {
      await lock.unlock();
    }
  }).catch((error) => {
    response.statusCode = 500;
    response.end(String(error));
  }),
);
await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());

const started = performance.now();
const bodies = await Promise.all(
  ['apple', 'pear', 'plum', 'fig'].map(async (item) => (await fetch(`http://127.0.0.1:${port}/add?item=${item}`)).text()),
);
for (const body of bodies) console.log(body);
console.log(`${bodies.length} concurrent requests served in ${Math.round(performance.now() - started)} ms`);
console.log(`cart 42 now holds: ${(await redis.lrange('example:cart:42', 0, -1)).join(', ')}`);
console.log(`requests in the critical section at once: at most ${mostInside}`);

server.closeAllConnections();
await new Promise((resolve) => server.close(() => resolve(undefined)));
await redis.del('example:cart:42');
await redisson.shutdown();
redis.disconnect();
