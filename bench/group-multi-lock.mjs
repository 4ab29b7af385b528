// Locking 100 values at once: one group multi-lock (`getMultiLock(group, values)`, one hash, one
// script call per lock and per unlock) against a MultiLock over 100 RLocks (`getMultiLock(...locks)`,
// a key and a round trip per member). One owner, no contention: lock and unlock in a loop.
// Usage: node bench/group-multi-lock.mjs [--values N] [--ms MS]   (after `npm run build`)
// Uses REDIS_URL if set, else starts a throwaway redis-server.
import { parseArgs } from 'node:util';
import Redis from 'ioredis';
import { RedissonClient } from '../dist/index.js';
import { killAll } from './lib/procs.mjs';
import { startRedis } from './lib/redis-server.mjs';

const { values: args } = parseArgs({
  options: { values: { type: 'string', default: '100' }, ms: { type: 'string', default: '5000' } },
});
const count = Number(args.values);
const duration = Number(args.ms);

const server = process.env.REDIS_URL ? { url: process.env.REDIS_URL, stop: async () => undefined } : await startRedis();
const redis = new Redis(server.url);
const redisson = new RedissonClient(redis);

// Commands the client sends (round trips, pipelined or not), counted where ioredis sends them.
let sent = 0;
const send = redis.sendCommand.bind(redis);
redis.sendCommand = (command, stream) => {
  sent++;
  return send(command, stream);
};

/** Lock-unlock cycles per second of `lock` over `duration` ms, after a short warm-up; with the commands sent per cycle. */
async function cyclesPerSecond(lock) {
  for (let i = 0; i < 20; i++) {
    await lock.lock();
    await lock.unlock();
  }
  const before = sent;
  let cycles = 0;
  const started = performance.now();
  while (performance.now() - started < duration) {
    await lock.lock();
    await lock.unlock();
    cycles++;
  }
  const elapsed = performance.now() - started;
  return {
    cyclesPerSecond: Math.round((cycles * 1000) / elapsed),
    commandsPerCycle: Math.round(((sent - before) / cycles) * 10) / 10,
  };
}

const values = Array.from({ length: count }, (_, i) => `item:${i}`);
const results = {
  values: count,
  group: await cyclesPerSecond(redisson.getMultiLock('bench:group', values)),
  multiLock: await cyclesPerSecond(redisson.getMultiLock(...values.map((value) => redisson.getLock(`bench:${value}`)))),
};
console.log(JSON.stringify(results));
await redisson.shutdown();
redis.disconnect();
await server.stop();
killAll();
