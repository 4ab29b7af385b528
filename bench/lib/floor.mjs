// What every floor adapter shares: the library's Lua scripts read from lua/ and run by EVALSHA on
// bare ioredis, and one subscriber connection on which waiters park between attempts. A waiter
// subscribes before its retry (a release landing between an attempt and the park still wakes it),
// is registered as woken before each attempt's reply, and holds a reference on its channel from its
// SUBSCRIBE to its last attempt (the channel is never unsubscribed under it).
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Redis from 'ioredis';

/** Lease of every hold, ms: explicit, never renewed. */
export const LEASE = 30_000;
/** Time-to-live of an unlock latch, ms (the library's). */
const LATCH_TTL = 20_000;
const LUA = new URL('../../lua/', import.meta.url);

/** `{name}`, or the name itself when it has braces (Redisson's rule for a name's hash tag). */
export const tag = (name) => (name.includes('{') ? name : `{${name}}`);

/** The text of `lua/<path>.lua` with its `--- @include` lines replaced as the library replaces them. */
export const luaSource = (path) =>
  readFileSync(new URL(`${path}.lua`, LUA), 'utf8').replace(/^--- @include "([\w-]+)"$/gm, (_line, name) =>
    luaSource(`includes/${name}`).trimEnd(),
  );

/** `lua/<path>.lua` on `redis`: `(keys, args) => reply`, sent as EVALSHA (EVAL once on NOSCRIPT). */
export function script(redis, path) {
  const command = `floor/${path}`;
  if (!redis[command]) redis.defineCommand(command, { lua: luaSource(path) });
  return (keys, args) => redis[command](keys.length, ...keys, ...args);
}

const processId = randomUUID();
let latches = 0;

/**
 * Runs an unlock script, `run(latch, latchTtl)`, with a fresh unlock latch key on `redis`, then
 * deletes the latch (not waited for), as Redisson does; resolves the script's reply.
 */
export async function withLatch(redis, name, run) {
  const latch = `redisson_unlock_latch:${tag(name)}:${processId}:${latches++}`;
  const reply = await run(latch, LATCH_TTL);
  redis.del(latch).catch(() => undefined);
  return reply;
}

/**
 * A floor's client on `url`: one command connection, one subscriber connection, owner tokens.
 * `wakes(message, waiting)` is how many waiters of a channel a message wakes (oldest first).
 */
export function floorClient(url, wakes) {
  const redis = new Redis(url);
  const subscriber = new Redis(url);
  const clientId = randomUUID();
  let next = 0;
  let waiters = 0;
  /** channel → { refs, subscribed: Promise, waiting: Set of waiters not woken since their last attempt began } */
  const channels = new Map();
  const wakeFirst = (entry, n) => {
    for (const waiter of entry.waiting) {
      if (n-- <= 0) return;
      entry.waiting.delete(waiter);
      waiter.wake();
    }
  };
  subscriber.on('message', (channel, message) => {
    const entry = channels.get(channel);
    if (entry) wakeFirst(entry, wakes(message, entry.waiting.size));
  });

  /** Runs `attempt` until it resolves true, parking on `channel` in between (see the header). */
  async function park(channel, attempt) {
    let entry = channels.get(channel);
    if (!entry)
      channels.set(channel, (entry = { refs: 0, subscribed: subscriber.subscribe(channel), waiting: new Set() }));
    entry.refs += 1;
    waiters += 1;
    const waiter = { wake: () => undefined };
    try {
      await entry.subscribed;
      for (;;) {
        entry.waiting.add(waiter);
        const retryIn = await attempt();
        if (retryIn === true) {
          // Woken during the attempt that won: the message may have been another waiter's turn.
          if (!entry.waiting.delete(waiter)) wakeFirst(entry, 1);
          return;
        }
        if (!entry.waiting.has(waiter)) continue; // a message came during the attempt
        await new Promise((resolve) => {
          const timer = retryIn >= 0 ? setTimeout(() => entry.waiting.delete(waiter) && resolve(), retryIn) : undefined;
          waiter.wake = () => resolve(clearTimeout(timer));
        });
      }
    } finally {
      entry.waiting.delete(waiter);
      waiters -= 1;
      if (--entry.refs === 0) {
        channels.delete(channel);
        subscriber.unsubscribe(channel).catch(() => undefined);
      }
    }
  }

  return {
    redis,
    /** A new owner token `<clientId>:<n>`: every acquisition is its own owner. */
    owner: () => `${clientId}:${next++}`,
    script: (path) => script(redis, path),
    /**
     * Acquires: one attempt, then (when it failed) subscribe to `channel` and retry until won.
     * `attempt()` resolves true when it won, else the ms after which to retry without a message (< 0: none).
     */
    async acquire(channel, attempt) {
      if ((await attempt()) !== true) await park(channel, attempt);
    },
    /** {@link withLatch} on this client's connection; rejects when the script found the lock not held. */
    async unlock(name, run) {
      const reply = await withLatch(redis, name, run);
      if (reply === null) throw new Error(`${name} was not held at its release (lease expired?)`);
      return reply;
    },
    diagnostics: () => ({ waiters, channels: channels.size, leases: 0 }),
    teardown() {
      subscriber.disconnect();
      redis.disconnect();
    },
  };
}
