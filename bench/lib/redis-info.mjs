// Server-side counters read on a separate admin connection.
import { sleep } from './stats.mjs';

/** Commands executed by Redis so far, by name (INFO commandstats; includes calls made inside scripts). */
export async function commandStats(admin) {
  const info = await admin.info('commandstats');
  const stats = {};
  for (const [, name, calls] of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) stats[name] = Number(calls);
  return stats;
}

/** Admin commands the bench itself sends on its own connection; left out of every delta. */
const ADMIN = /^(info|pubsub|client|flushall|config|dbsize)(\||$)/;

/** Commands executed between two snapshots, the bench's own admin commands left out. */
export function statsDelta(before, after) {
  const delta = {};
  for (const [name, calls] of Object.entries(after)) {
    const n = calls - (before[name] ?? 0);
    if (n > 0 && !ADMIN.test(name)) delta[name] = n;
  }
  return delta;
}

/** Channels with at least one subscriber matching `pattern`. */
export async function channelCount(admin, pattern = '*') {
  return (await admin.pubsub('CHANNELS', pattern)).length;
}

/** Client connections currently subscribed to something. */
export async function subscriberConnections(admin) {
  const list = await admin.client('LIST');
  return list.split('\n').filter((line) => /\b(sub|psub|ssub)=[1-9]/.test(line)).length;
}

/** CPU time the Redis server has used so far, ms (INFO cpu: user + system, main and child threads). */
export async function serverCpuMs(admin) {
  const info = await admin.info('cpu');
  const seconds = (name) => Number(info.match(new RegExp(`^${name}:([\\d.]+)`, 'm'))?.[1] ?? 0);
  return (seconds('used_cpu_user') + seconds('used_cpu_sys')) * 1000;
}

/**
 * Median of three watchdog rounds' durations, from outside, for locks renewed in the order `first`
 * to `last`: once the last lock's TTL jumps (its round's last batch ran), the first's and the
 * last's TTLs, read together (one pipeline on one connection; on a Cluster, a read from each node at
 * once), differ by the time from the first batch to the last. A reading where either lapsed is left
 * out; after `giveUpMs`, the median of the readings taken so far, NaN when none.
 */
export async function renewalRoundMs(redis, first, last, giveUpMs = 60_000) {
  const rounds = [];
  const giveUpAt = performance.now() + giveUpMs;
  let previous = await redis.pttl(last);
  while (rounds.length < 3 && performance.now() < giveUpAt) {
    await sleep(2);
    const ttl = await redis.pttl(last);
    if (ttl > previous) {
      const [a, b] = await Promise.all([redis.pttl(first), redis.pttl(last)]);
      if (a >= 0 && b >= 0) rounds.push(b - a);
    }
    previous = ttl;
  }
  return rounds.length ? rounds.sort((x, y) => x - y)[(rounds.length - 1) >> 1] : NaN;
}
