// RedLock floor: lua/lock/ on every member server, bare ioredis (bench/lib/floor.mjs). One owner per
// acquisition tries every member at once and wins with a majority; a loss releases what it took and
// waits for a release on the first member's channel or the shortest TTL among the members held.
// Its members alone are five RLock floors (floor-rlock.mjs), one per server, taken in parallel.
import Redis from 'ioredis';
import { LEASE, floorClient, script, tag, withLatch } from '../lib/floor.mjs';
import { setup as setupRLockFloor } from './floor-rlock.mjs';

export const name = 'RedLock floor';
export const pkg = 'ioredis';
export const waiting = 'pub/sub on one member, or the TTL';
export const floor = true;
export const floorOf = 'ioredisson';
export const mutex = false;

/** `{ lock([key]) -> release(), teardown() }` over the servers at `urls`. */
export async function setupRedLock(urls) {
  const client = floorClient(urls[0], () => 1);
  const members = [client.redis, ...urls.slice(1).map((url) => new Redis(url))].map((redis) => ({
    redis,
    acquire: script(redis, 'lock/acquire'),
    unlock: script(redis, 'lock/unlock'),
  }));
  const quorum = Math.floor(members.length / 2) + 1;
  let memberFloors; // made on first use: only the RedLock case times the members alone
  /** Unlocks `taken` members (a member not held answers nil, and is left as it is). */
  const release = (taken, key, channel, owner) =>
    Promise.all(
      taken.map(({ redis, unlock }) =>
        withLatch(redis, key, (latch, ttl) => unlock([key, channel, latch], [0, LEASE, owner, ttl, 'PUBLISH'])),
      ),
    );
  return {
    async lock([key]) {
      const owner = client.owner();
      const channel = `redisson_lock__channel:${tag(key)}`;
      await client.acquire(channel, async () => {
        const replies = await Promise.all(members.map((m) => m.acquire([key], [LEASE, owner, 0])));
        const taken = members.filter((_, i) => replies[i] === null);
        if (taken.length >= quorum) return true;
        await release(taken, key, channel, owner);
        const ttls = replies.filter((ttl) => ttl !== null && ttl >= 0);
        return ttls.length ? Math.min(...ttls) : -1;
      });
      return () => release(members, key, channel, owner);
    },
    async lockMembers(key) {
      memberFloors ??= Promise.all(urls.map((url) => setupRLockFloor({ url })));
      const releases = await Promise.all((await memberFloors).map((floor) => floor.lock(key)));
      return () => Promise.all(releases.map((release) => release()));
    },
    diagnostics: client.diagnostics,
    teardown() {
      client.teardown();
      for (const { redis } of members.slice(1)) redis.disconnect();
      memberFloors?.then((floors) => floors.forEach((floor) => floor.teardown()));
    },
  };
}
