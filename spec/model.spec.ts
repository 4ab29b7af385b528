import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type Redis from 'ioredis';
import { newRequestId, type UnlockRequest, type UnlockResult } from '../lib/kinds/scripts/lock';
import { lockScripts, lostReplyRunner, plainRunner, type LockScriptsUnderTest } from './helpers/lock-scripts';
import { useRedis } from './helpers/fixture';

/*
 * Model-based tests of the RLock scripts: random sequences of lock operations run against Redis and
 * against an in-memory model of Redisson's RLock semantics; after every step the script's reply and
 * the whole keyspace must match the model, and at the end of a sequence so must the unlock messages.
 */

const { server } = useRedis();

/** A lease observed by PTTL may have run down by this much (loaded machines pause). */
const PTTL_SLACK = 8_000;
const LEASES = [10_000, 30_000, 60_000] as const;
const LATCH_TTL = 20_000;

// Derived names written out from the protocol notes, independently of lib/keys.ts.
const tagged = (prefix: string, name: string): string =>
  name.includes('{') ? `${prefix}:${name}` : `${prefix}:{${name}}`;
const channelOf = (name: string): string => tagged('redisson_lock__channel', name);
const latchOf = (name: string, requestId: string): string => `${tagged('redisson_unlock_latch', name)}:${requestId}`;

/** Who an action acts as: one of the owners, or whoever holds the lock now (owner 0 if nobody). */
type Who = number | 'holder';

type Action =
  | { op: 'acquire'; name: number; who: Who; lease: number }
  | { op: 'resendAcquire' }
  | { op: 'trim'; keep: number | 'previous' }
  | { op: 'unlock'; name: number; who: Who; lease: number; lost: boolean }
  | { op: 'resend'; lost: boolean }
  | { op: 'expire'; name: number }
  | { op: 'persist'; name: number }
  | { op: 'forceUnlock'; name: number }
  | { op: 'renew'; targets: { name: number; who: Who }[]; lease: number };

interface AcquireRequest {
  name: string;
  owner: string;
  lease: number;
  /** Holds the caller believes the owner has (its acquisitions in flight included). */
  believed: number;
}

interface LockModel {
  /** owner token -> hold count */
  holders: Map<string, number>;
  /** The lease last applied, `null` when the key has no expiry. */
  lease: number | null;
}

/** Redisson RLock semantics (protocol notes, section 1), in memory. */
class Model {
  readonly locks = new Map<string, LockModel>();
  /** Unlock latches still in Redis: latch key -> outcome it replays. */
  readonly latches = new Map<string, UnlockResult>();
  /** Unlock messages published, per channel. */
  readonly published = new Map<string, number>();

  holderOf(name: string): string | undefined {
    return this.locks.get(name)?.holders.keys().next().value;
  }

  holdsOf(name: string, owner: string): number {
    return this.locks.get(name)?.holders.get(owner) ?? 0;
  }

  /**
   * `null` when acquired, else the lease the holder's PTTL reflects (`null` lease: no expiry).
   * More holds than `believed` mark a re-send of a call that already landed: lease reset, no count.
   */
  acquire({ name, owner, lease, believed }: AcquireRequest): null | { holderLease: number | null } {
    const lock = this.locks.get(name);
    const held = this.holdsOf(name, owner);
    if (lock && held > believed) {
      lock.lease = lease;
      return null;
    }
    if (lock && held === 0) return { holderLease: lock.lease };
    const entry = lock ?? { holders: new Map<string, number>(), lease };
    entry.holders.set(owner, held + 1);
    entry.lease = lease;
    this.locks.set(name, entry);
    return null;
  }

  /** Takes the owner's holds back down to `keep`; returns how many it removed. */
  trim(name: string, owner: string, keep: number): number {
    const held = this.holdsOf(name, owner);
    if (held <= keep) return 0;
    const lock = this.locks.get(name)!;
    if (keep > 0) {
      lock.holders.set(owner, keep);
    } else {
      lock.holders.delete(owner);
      if (lock.holders.size === 0) {
        this.locks.delete(name);
        this.publish(name);
      }
    }
    return held - keep;
  }

  /** `lost`: the caller never got the reply, so the library did not delete the latch afterwards. */
  unlock({ name, owner, leaseTime, requestId }: UnlockRequest, lost: boolean): UnlockResult {
    const latch = latchOf(name, requestId);
    let result = this.latches.get(latch);
    if (result === undefined) {
      const lock = this.locks.get(name);
      const count = lock?.holders.get(owner);
      if (lock === undefined || count === undefined) {
        result = 'not-held';
      } else if (count > 1) {
        lock.holders.set(owner, count - 1);
        lock.lease = leaseTime;
        result = 'decremented';
      } else {
        this.locks.delete(name);
        this.publish(name);
        result = 'released';
      }
      if (result !== 'not-held') this.latches.set(latch, result);
    }
    if (!lost) this.latches.delete(latch);
    return result;
  }

  forceUnlock(name: string): boolean {
    const existed = this.locks.delete(name);
    if (existed) this.publish(name);
    return existed;
  }

  renew(names: string[], owners: string[], lease: number): boolean[] {
    return names.map((name, i) => {
      const lock = this.locks.get(name);
      if (!lock?.holders.has(owners[i]!)) return false;
      lock.lease = lease;
      return true;
    });
  }

  /** What `DEL name` (a lease running out) replies. */
  expire(name: string): number {
    return this.locks.delete(name) ? 1 : 0;
  }

  /** What `PERSIST name` replies. */
  persist(name: string): number {
    const lock = this.locks.get(name);
    if (!lock || lock.lease === null) return 0;
    lock.lease = null;
    return 1;
  }

  private publish(name: string): void {
    const channel = channelOf(name);
    this.published.set(channel, (this.published.get(channel) ?? 0) + 1);
  }
}

function expectTtl(actual: number, lease: number | null): void {
  if (lease === null) {
    expect(actual).toBe(-1);
  } else {
    expect(actual).toBeLessThanOrEqual(lease);
    expect(actual).toBeGreaterThan(lease - PTTL_SLACK);
  }
}

// Arbitraries. Name indexes are taken modulo the number of names of a run.
const nameIx = fc.nat({ max: 5 });
const who: fc.Arbitrary<Who> = fc.oneof(fc.nat({ max: 2 }), fc.constant('holder' as const));
const lease = fc.constantFrom(...LEASES);
const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('acquire' as const), name: nameIx, who: fc.nat({ max: 2 }), lease }) },
  // Reentrant acquire: by the current holder.
  { weight: 2, arbitrary: fc.record({ op: fc.constant('acquire' as const), name: nameIx, who: fc.constant('holder' as const), lease }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant('unlock' as const), name: nameIx, who, lease, lost: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('resend' as const), lost: fc.boolean() }) },
  // The previous acquire sent again as it was (ioredis resends unanswered commands on reconnect).
  { weight: 1, arbitrary: fc.record({ op: fc.constant('resendAcquire' as const) }) },
  // Undo uncertain acquisitions of the previous acquire's owner: back to what it had before it, or to `keep`.
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant('trim' as const), keep: fc.oneof(fc.constant('previous' as const), fc.nat({ max: 2 })) }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('expire' as const), name: nameIx }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('persist' as const), name: nameIx }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('forceUnlock' as const), name: nameIx }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('renew' as const),
      targets: fc.array(fc.record({ name: nameIx, who }), { minLength: 1, maxLength: 4 }),
      lease,
    }),
  },
);

/** Redis Cluster's hash-tag rule: a non-empty run between the first `{` and the next `}`. */
function hasHashTag(name: string): boolean {
  const open = name.indexOf('{');
  return open >= 0 && name.indexOf('}', open + 1) > open + 1;
}

const AWKWARD_NAMES = [
  `it's "quoted"`,
  "'); redis.call('flushall') --",
  ']]--[[ [==[ ]=]',
  '100% %s %d %%',
  '--',
  'line\nbreak\r\n',
  ' spaced  name ',
  'nul\0byte',
  'KEYS[1] ARGV[2] ${x} \\n',
  '*?[a-z]',
  'ключ-锁-Ωμέγα',
  '🔒🗝️👩‍💻',
  'order:{42}:lines',
  '{tenant}',
  'x{🔒}y',
  '}',
];

/** Names the public API would accept: non-empty, well-formed, braces only as a hash tag. */
const awkwardName = fc
  .oneof(
    fc.constantFrom(...AWKWARD_NAMES),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }),
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 }),
    fc
      .tuple(fc.string({ maxLength: 4 }), fc.string({ minLength: 1, maxLength: 4 }), fc.string({ maxLength: 4 }))
      .map(([head, tag, tail]) => `${head.replace(/[{}]/g, '')}{${tag.replace(/[{}]/g, '') || 't'}}${tail}`),
  )
  .filter((name) => name.length > 0 && name.isWellFormed() && (!name.includes('{') || hasHashTag(name)));

describe('RLock scripts against an in-memory model', () => {
  const clientA = randomUUID();
  const clientB = randomUUID();
  const owners = [`${clientA}:1`, `${clientA}:2`, `${clientB}:1`];
  let conn: Redis;
  let scripts: LockScriptsUnderTest;
  let lostReply: LockScriptsUnderTest;
  let subscriber: Redis;
  const messages: [channel: string, message: string][] = [];

  beforeAll(async () => {
    conn = server().connect();
    scripts = lockScripts(plainRunner(conn));
    // Same scripts on the same connection, but the caller "never saw the reply": its latches stay.
    lostReply = lockScripts(lostReplyRunner(conn));
    subscriber = server().connect();
    subscriber.on('pmessage', (_pattern: string, channel: string, message: string) => messages.push([channel, message]));
    await subscriber.psubscribe('redisson_lock__channel:*');
  });

  /** Checks every lock's hash and PTTL, and that the keyspace holds exactly the model's keys. */
  async function expectState(model: Model, names: string[]): Promise<void> {
    const latches = [...model.latches.keys()];
    const pipeline = conn.pipeline();
    for (const name of names) pipeline.hgetall(name).pttl(name);
    for (const latch of latches) pipeline.get(latch).pttl(latch);
    pipeline.keys('*');
    const replies = (await pipeline.exec())!.map(([error, reply]) => {
      if (error) throw error;
      return reply;
    });
    names.forEach((name, i) => {
      const lock = model.locks.get(name);
      expect(replies[2 * i]).toEqual(Object.fromEntries([...(lock?.holders ?? [])].map(([o, n]) => [o, String(n)])));
      if (lock) expectTtl(replies[2 * i + 1] as number, lock.lease);
      else expect(replies[2 * i + 1]).toBe(-2);
    });
    latches.forEach((latch, i) => {
      const at = 2 * names.length + 2 * i;
      expect(replies[at]).toBe(model.latches.get(latch) === 'released' ? '1' : '0');
      expectTtl(replies[at + 1] as number, LATCH_TTL);
    });
    expect((replies.at(-1) as string[]).sort()).toEqual([...model.locks.keys(), ...latches].sort());
  }

  async function runSequence(names: string[], actions: Action[]): Promise<void> {
    await conn.flushall();
    await subscriber.ping(); // delivers any message still in flight from an earlier run
    messages.length = 0;
    const model = new Model();
    let previous: UnlockRequest | undefined;
    let previousAcquire: AcquireRequest | undefined;
    const nameAt = (ix: number): string => names[ix % names.length]!;
    const ownerOf = (name: string, w: Who): string =>
      w === 'holder' ? (model.holderOf(name) ?? owners[0]!) : owners[w]!;

    for (const [step, act] of actions.entries()) {
      try {
        switch (act.op) {
          case 'acquire':
          case 'resendAcquire': {
            let request: AcquireRequest;
            if (act.op === 'acquire') {
              const name = nameAt(act.name);
              const owner = ownerOf(name, act.who);
              request = { name, owner, lease: act.lease, believed: model.holdsOf(name, owner) };
            } else if (previousAcquire) {
              request = previousAcquire;
            } else {
              break;
            }
            previousAcquire = request;
            const expected = model.acquire(request);
            const reply = await scripts.acquire(request.name, request.owner, request.lease, request.believed);
            if (expected === null) expect(reply).toBeNull();
            else expectTtl(reply!, expected.holderLease);
            break;
          }
          case 'trim': {
            if (!previousAcquire) break;
            const { name, owner, believed } = previousAcquire;
            const keep = act.keep === 'previous' ? believed : act.keep;
            expect(await scripts.trim(name, owner, keep)).toBe(model.trim(name, owner, keep));
            break;
          }
          case 'unlock':
          case 'resend': {
            let request: UnlockRequest;
            if (act.op === 'unlock') {
              const name = nameAt(act.name);
              request = { name, owner: ownerOf(name, act.who), leaseTime: act.lease, requestId: newRequestId() };
            } else if (previous) {
              request = previous;
            } else {
              break;
            }
            previous = request;
            const expected = model.unlock(request, act.lost);
            const via = act.lost ? lostReply : scripts;
            expect(await via.unlock(request)).toBe(expected);
            await via.flush(); // answered latches are deleted in batches; make that happen now
            break;
          }
          case 'expire': {
            const name = nameAt(act.name);
            expect(await conn.del(name)).toBe(model.expire(name));
            break;
          }
          case 'persist': {
            const name = nameAt(act.name);
            expect(await conn.persist(name)).toBe(model.persist(name));
            break;
          }
          case 'forceUnlock': {
            const name = nameAt(act.name);
            expect(await scripts.forceUnlock(name)).toBe(model.forceUnlock(name));
            break;
          }
          case 'renew': {
            const batch = act.targets.map(({ name, who: w }) => [nameAt(name), ownerOf(nameAt(name), w)] as const);
            const batchNames = batch.map(([name]) => name);
            const batchOwners = batch.map(([, owner]) => owner);
            const expected = model.renew(batchNames, batchOwners, act.lease);
            expect(await scripts.renew(batchNames, batchOwners, act.lease)).toEqual(expected);
            break;
          }
        }
        await expectState(model, names);
      } catch (error) {
        (error as Error).message = `step ${step} ${JSON.stringify(act)}:\n${(error as Error).message}`;
        throw error;
      }
    }

    await subscriber.ping();
    expect(messages.every(([, message]) => message === '0')).toBe(true);
    const received: Record<string, number> = {};
    for (const [channel] of messages) received[channel] = (received[channel] ?? 0) + 1;
    expect(received).toEqual(Object.fromEntries(model.published));
  }

  it('matches the model on replies, hashes, TTLs, latches and unlock messages (incl. re-sends and trims)', async () => {
    const names = ['model:a', 'model:b', '{model}:c'];
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 1, maxLength: 40, size: 'max' }), (actions) => runSequence(names, actions)),
      { numRuns: 60 },
    );
  });

  it('treats awkward names as data: quotes, Lua syntax, %, newlines, NUL, unicode, hash tags', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(awkwardName, { minLength: 2, maxLength: 3 }),
        fc.array(action, { minLength: 1, maxLength: 25, size: 'max' }),
        (names, actions) => runSequence(names, actions),
      ),
      { numRuns: 40 },
    );
  });
});
