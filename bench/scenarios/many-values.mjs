// 10. Locking 100 values at once, one owner, no contention: lock and unlock in a loop, as one group
//     multi-lock (`getMultiLock(group, values)`: one hash, one script call to lock and one to unlock)
//     and as a MultiLock over 100 RLocks (`getMultiLock(...locks)`: a key and a round trip per member).
//     ioredisson only: no peer has a group multi-lock.
import Redis from 'ioredis';
import { RedissonClient } from 'ioredisson';
import { breakdown, total } from '../lib/proxy-client.mjs';
import { commandStats, statsDelta } from '../lib/redis-info.mjs';
import { latency } from '../lib/stats.mjs';

const VALUES = 100;
const values = Array.from({ length: VALUES }, (_, i) => `item:${i}`);

/** The lock each case measures, made on `redisson`. */
const LOCKS = {
  group: (redisson) => redisson.getMultiLock('bench:group', values),
  multilock: (redisson) => redisson.getMultiLock(...values.map((value) => redisson.getLock(`bench:${value}`))),
};

export default {
  name: 'many-values',
  title: `Locking ${VALUES} values at once`,
  takesPart: (adapter) => adapter.id === 'ioredisson',
  cases: ({ quick, duration }) => [
    { id: 'group', label: `getMultiLock(group, ${VALUES} values), one hash`, ms: duration ?? (quick ? 1_000 : 3_000) },
    { id: 'multilock', label: `getMultiLock(...${VALUES} RLocks)`, ms: duration ?? (quick ? 1_000 : 3_000) },
  ],
  columns: [
    { key: 'cyclesPerSec', label: 'cycles/s', better: 'higher', main: true },
    { key: 'p50', label: 'p50 ms' },
    { key: 'p99', label: 'p99 ms' },
    { key: 'sent', label: 'cmds sent/cycle' },
    { key: 'commands', label: 'Redis cmds/cycle (commandstats)' },
  ],

  async run(env, _adapter, { id, ms }) {
    const redis = new Redis(env.url);
    const redisson = new RedissonClient(redis);
    // Commands the client sends (pipelined or not), counted where ioredis sends them.
    let sent = 0;
    const send = redis.sendCommand.bind(redis);
    redis.sendCommand = (command, stream) => {
      sent++;
      return send(command, stream);
    };
    const lock = LOCKS[id](redisson);
    try {
      for (let i = 0; i < 20; i++) {
        await lock.lock();
        await lock.unlock();
      }
      const sentBefore = sent;
      const before = await commandStats(env.admin);
      const samples = [];
      const start = performance.now();
      while (performance.now() - start < ms) {
        const t = performance.now();
        await lock.lock();
        await lock.unlock();
        samples.push(performance.now() - t);
      }
      const elapsed = performance.now() - start;
      const cycles = samples.length;
      const delta = statsDelta(before, await commandStats(env.admin));
      return {
        cyclesPerSec: (cycles / elapsed) * 1000,
        ...latency(samples),
        sent: (sent - sentBefore) / cycles,
        commands: total(delta) / cycles,
        commandsDetail: breakdown(delta, cycles),
      };
    } finally {
      await redisson.shutdown();
      redis.disconnect();
    }
  },
};
