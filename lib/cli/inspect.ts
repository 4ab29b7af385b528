import type { Redis } from 'ioredis';
import { PERMIT_NO_EXPIRY, fairWaiterChannel, readerTimeoutPrefix, unlockLatchKey } from '../keys';
import { STORAGE, type Storage, type StoredAs } from '../kinds/registry';
import { readOwnerRecords, type RecordedOwner } from '../kernel/owner-record';

/**
 * Reads what a name holds in Redis and tells which Redisson kind wrote it, from the data alone
 * (Redisson's formats: see the protocol notes). Read-only: every command here is a read.
 */

/** Kinds the inspector recognises: the ways of storing of the registry of kinds. */
export type Kind = StoredAs;

/** One owner token holding a lock, with its holds. */
export interface Owner {
  /** The hash field: `<clientId>:<threadId>` (a write hold adds `:write`). */
  field: string;
  clientId: string;
  threadId: string;
  holds: number;
  /** Read/write locks: which side this field holds. */
  side?: 'read' | 'write';
  /** Read holds: ms left on each hold's `rwlock_timeout` key, oldest first (-2: expired, -1: no expiry). */
  readLeases?: number[];
  /** What the owner's client recorded about it (`ioredisson:client:{<clientId>}`). */
  record?: RecordedOwner;
}

/** One value of a group multi-lock and its holder. */
export interface GroupValue {
  /** The hash field: Redisson's hash of the value's codec bytes (the value itself is not stored). */
  field: string;
  /** The owner token `<clientId>:<threadId>`. */
  owner: string;
  clientId: string;
  threadId: string;
  holds: number;
  /** Epoch ms at which the owner's hold on the value expires (null: no expiry field). */
  expiresAt: number | null;
  /** ms from now to the expiry; negative: expired, free for the next acquirer. */
  expiresIn: number | null;
}

/** One waiter in a fair lock's queue. */
export interface Waiter {
  position: number;
  token: string;
  clientId: string;
  threadId: string;
  /** Epoch ms after which the waiter is presumed dead (null: no score in the deadlines zset). */
  deadline: number | null;
  /** ms from now to the deadline (negative: past, purged by the next fair-lock script). */
  deadlineIn: number | null;
  /** What the waiter's client recorded about it. */
  record?: RecordedOwner;
}

/** One acquired permit of a permit-expirable semaphore. */
export interface Permit {
  /** The 16-byte id as 32 hex characters, as Redisson's API shows it. */
  id: string;
  /** Epoch ms at which the permit expires; null: never. */
  expiresAt: number | null;
  /** ms from now to the expiry; null: never. */
  expiresIn: number | null;
  /** Expired but not yet reclaimed (the next semaphore script gives it back). */
  expired: boolean;
}

/** What one name holds. */
export interface Report {
  name: string;
  kind: Kind;
  label: string;
  /** A lock: held by anyone. A semaphore or latch: the counter exists. */
  exists: boolean;
  /** PTTL of the main key in ms: -2 missing, -1 no expiry. */
  ttl: number;
  /** Every key read, by role, with whether it exists. */
  keys: Record<string, { key: string; exists: boolean }>;
  /** The channel its waiters listen on, and how many connections listen now (PUBSUB NUMSUB). */
  channel: { name: string; subscribers: number };
  owners?: Owner[];
  /** A group multi-lock: its values' fields with their holders. */
  values?: GroupValue[];
  mode?: 'read' | 'write' | null;
  queue?: Waiter[];
  token?: string | null;
  permits?: number;
  acquired?: Permit[];
  count?: number;
  notes: string[];
}

/** A failure the command reports with its own exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** Exit codes of the `ioredisson` command. */
export const EXIT = {
  OK: 0,
  /** The name holds nothing. */
  NOT_FOUND: 1,
  /** Bad command line. */
  USAGE: 2,
  /** The name holds data that is not a Redisson lock-family object. */
  WRONG_TYPE: 3,
  /** Redis cannot be reached, or answered with an error. */
  REDIS: 4,
  /** force-unlock refused: no --yes, or a kind it does not unlock. */
  REFUSED: 5,
} as const;

/** The keys and channels of `name` the inspector reads, each from the registry's storage entries. */
export function derivedKeys(name: string): {
  queue: string;
  timeout: string;
  token: string;
  permits: string;
  lockChannel: string;
  rwChannel: string;
  semaphoreChannel: string;
  latchChannel: string;
} {
  return {
    queue: STORAGE.fairLock.keys.queue.of(name),
    timeout: STORAGE.fairLock.keys.deadlines.of(name),
    token: STORAGE.fencedLock.keys.token.of(name),
    permits: STORAGE.permitExpirableSemaphore.keys.permits.of(name),
    lockChannel: STORAGE.lock.channel(name),
    rwChannel: STORAGE.readWriteLock.channel(name),
    semaphoreChannel: STORAGE.semaphore.channel(name),
    latchChannel: STORAGE.countDownLatch.channel(name),
  };
}

/** Stands for the object's name in a key template. */
const NAME = '\u0000';
/** Stands for a further argument of a key function (a request id, an owner) in a key template. */
const ARG = '\u0001';

/**
 * A kind of key derived from a name: `of` with `ARG` for its other arguments, and what those
 * arguments look like (regular expressions, in order).
 */
interface KeyShape {
  role: string;
  of(name: string): string;
  args: readonly string[];
}

/** Every key derived from a name: the storages' keys, every lock's unlock latches, every reader's hold timeouts. */
const SHAPES: readonly KeyShape[] = [
  ...Object.values<Storage>(STORAGE).flatMap((storage) => Object.values(storage.keys).map(({ role, of }) => ({ role, of, args: [] }))),
  { role: 'unlock latch', of: (name) => unlockLatchKey(name, ARG), args: ['[0-9a-f]{32}'] },
  { role: 'read-hold timeout', of: (name) => `${readerTimeoutPrefix(name, ARG)}:${ARG}`, args: ['[^:]+:\\d+', '\\d+'] },
];

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The shape's key for a name given as `name` (a SCAN glob, or a regular-expression group), in both
 * of Redisson's forms: a name without braces is braced in, a name with braces goes in verbatim.
 */
function forms(shape: KeyShape, name: { braced: string; verbatim: string }, quote: (text: string) => string, arg: (i: number) => string): string[] {
  const fill = (text: string, marker: string, value: string): string => {
    let i = 0;
    return quote(text)
      .split(quote(marker))
      .join(value)
      .replace(new RegExp(quote(ARG), 'g'), () => arg(i++));
  };
  return [fill(shape.of(NAME), NAME, name.braced), fill(shape.of(`{${NAME}`), `{${NAME}`, name.verbatim)];
}

/** Recognisers of derived keys, made once from {@link SHAPES}. */
const RECOGNISERS = SHAPES.map((shape) => ({
  role: shape.role,
  patterns: forms(shape, { braced: '([^{]*)', verbatim: '(.*\\{.*)' }, escape, (i) => `(?:${shape.args[i]})`).map((source) => new RegExp(`^${source}$`, 's')),
}));

/** Strips a derived key back to the name it belongs to (`redisson_lock_queue:{a}` -> `a`), if it is one. */
export function baseOf(key: string): { name: string; role: string } | null {
  for (const { role, patterns } of RECOGNISERS) {
    for (const pattern of patterns) {
      const m = pattern.exec(key);
      if (m) return { name: m[1]!, role };
    }
  }
  return null;
}

/** SCAN globs for the derived keys (unlock latches and read-hold timeouts aside) of names matching `pattern`. */
function derivedPatterns(pattern: string): string[] {
  return SHAPES.filter((shape) => shape.args.length === 0).flatMap((shape) => forms(shape, { braced: pattern, verbatim: pattern }, (text) => text, () => '*'));
}

const INTEGER = /^-?\d+$/;

/** Splits `<clientId>:<threadId>` (the client id itself contains no `:`, the thread id is decimal). */
function splitToken(token: string): { clientId: string; threadId: string } | null {
  const m = /^(.+):(\d+)$/.exec(token);
  return m ? { clientId: m[1]!, threadId: m[2]! } : null;
}

async function subscribers(redis: Redis, channel: string): Promise<number> {
  const reply = (await redis.pubsub('NUMSUB', channel)) as [string, number | string];
  return Number(reply[1]);
}

export interface InspectOptions {
  /** Read a string counter as this kind (Redisson stores a semaphore and a latch alike). */
  as?: 'semaphore' | 'latch' | undefined;
  /** The current time in epoch ms (deadlines and expiries are client wall-clock times). */
  now?: number;
}

/**
 * What `name` holds, each owner and waiter with what its client recorded about it; rejects with a
 * {@link CliError} when it holds nothing or something else.
 */
export async function inspect(redis: Redis, name: string, options: InspectOptions = {}): Promise<Report> {
  const report = await inspectKeys(redis, name, options);
  const people: (Owner | Waiter)[] = [...(report.owners ?? []), ...(report.queue ?? [])].filter((o) => o.threadId !== '');
  const records = await readOwnerRecords(redis, people.map(({ clientId, threadId }) => ({ clientId, threadId, write: false })));
  people.forEach((person, i) => (person.record = records[i]));
  return report;
}

async function inspectKeys(redis: Redis, name: string, options: InspectOptions): Promise<Report> {
  const now = options.now ?? Date.now();
  const d = derivedKeys(name);
  const [type, queueType, timeoutType, tokenType, permitsType, ttl] = await Promise.all([
    redis.type(name),
    redis.type(d.queue),
    redis.type(d.timeout),
    redis.type(d.token),
    redis.type(d.permits),
    redis.pttl(name),
  ]);
  const keys: Report['keys'] = { main: { key: name, exists: type !== 'none' } };
  const notes: string[] = [];
  const base = { name, ttl, keys, notes };

  if (type === 'hash') {
    const fields = await redis.hgetall(name);
    if ('mode' in fields) return readWriteLock(redis, base, fields, d, type);
    if (Object.keys(fields).some((field) => GROUP_VALUE_FIELD.test(field))) return groupMultiLock(redis, base, fields, d, now);
    const owners = lockOwners(name, fields);
    if (queueType !== 'none' || timeoutType !== 'none') return fairLock(redis, base, owners, d, queueType, timeoutType, now);
    if (tokenType !== 'none') return fencedLock(redis, base, owners, d, tokenType);
    return {
      ...base,
      kind: 'lock',
      label: STORAGE.lock.label,
      exists: true,
      owners,
      channel: { name: d.lockChannel, subscribers: await subscribers(redis, d.lockChannel) },
    };
  }
  if (type === 'string') {
    const value = (await redis.get(name)) ?? '';
    if (!INTEGER.test(value)) {
      throw new CliError(`'${name}' is a string that is not a counter (${JSON.stringify(value.slice(0, 40))}): not a Redisson semaphore or latch`, EXIT.WRONG_TYPE);
    }
    if (permitsType !== 'none') return expirableSemaphore(redis, base, Number(value), d, permitsType, now);
    return counter(redis, base, Number(value), d, options.as);
  }
  if (type === 'none') {
    if (queueType !== 'none' || timeoutType !== 'none') return fairLock(redis, base, [], d, queueType, timeoutType, now);
    if (permitsType !== 'none') return expirableSemaphore(redis, base, 0, d, permitsType, now);
    if (tokenType !== 'none') return fencedLock(redis, base, [], d, tokenType);
    const derived = baseOf(name);
    throw new CliError(
      `nothing is stored under '${name}'`,
      EXIT.NOT_FOUND,
      derived
        ? `'${name}' is the ${derived.role} key of '${derived.name}': try \`ioredisson inspect '${derived.name}'\``
        : 'a free lock, an open latch and an unset semaphore all leave no key; `ioredisson list` shows what exists',
    );
  }
  const derived = baseOf(name);
  throw new CliError(
    `'${name}' is a ${type}, which no Redisson lock-family object stores under its own name`,
    EXIT.WRONG_TYPE,
    derived ? `it is the ${derived.role} key of '${derived.name}': try \`ioredisson inspect '${derived.name}'\`` : undefined,
  );
}

type Base = Pick<Report, 'name' | 'ttl' | 'keys' | 'notes'>;
type Derived = ReturnType<typeof derivedKeys>;

/** The per-owner fields of a group multi-lock's value: `<field>:<owner>:expire_time` and `:lock_count`. */
const GROUP_VALUE_FIELD = /:(expire_time|lock_count)$/;

async function groupMultiLock(redis: Redis, base: Base, fields: Record<string, string>, d: Derived, now: number): Promise<Report> {
  const values: GroupValue[] = [];
  for (const [field, owner] of Object.entries(fields)) {
    if (GROUP_VALUE_FIELD.test(field)) continue;
    const split = splitToken(owner);
    if (!split) {
      throw new CliError(
        `'${base.name}' is a hash but not a Redisson group multi-lock: field ${JSON.stringify(field.slice(0, 60))} does not name an owner <clientId>:<threadId>`,
        EXIT.WRONG_TYPE,
      );
    }
    const expiry = fields[`${field}:${owner}:expire_time`];
    const expiresAt = expiry === undefined ? null : Number(expiry);
    values.push({ field, owner, ...split, holds: Number(fields[`${field}:${owner}:lock_count`] ?? 0), expiresAt, expiresIn: expiresAt === null ? null : expiresAt - now });
  }
  const expired = values.filter((value) => value.expiresIn !== null && value.expiresIn < 0).length;
  if (expired > 0) base.notes.push(`${expired} value(s) past their holder's expiry: free for the next acquirer, removed by its holder's release`);
  base.notes.push('values are stored as hashes of their codec bytes; `ioredisson` cannot show the values themselves');
  return {
    ...base,
    kind: 'fasterMultiLock',
    label: STORAGE.fasterMultiLock.label,
    exists: true,
    values,
    channel: { name: d.lockChannel, subscribers: await subscribers(redis, d.lockChannel) },
  };
}

function lockOwners(name: string, fields: Record<string, string>): Owner[] {
  const owners: Owner[] = [];
  for (const [field, value] of Object.entries(fields)) {
    const split = splitToken(field);
    if (!split || !INTEGER.test(value)) {
      throw new CliError(
        `'${name}' is a hash but not a Redisson lock: field ${JSON.stringify(field.slice(0, 60))} is not <clientId>:<threadId> with a hold count`,
        EXIT.WRONG_TYPE,
      );
    }
    owners.push({ field, ...split, holds: Number(value) });
  }
  return owners;
}

async function fairLock(redis: Redis, base: Base, owners: Owner[], d: Derived, queueType: string, timeoutType: string, now: number): Promise<Report> {
  base.keys.queue = { key: d.queue, exists: queueType !== 'none' };
  base.keys.deadlines = { key: d.timeout, exists: timeoutType !== 'none' };
  if (queueType !== 'none' && queueType !== 'list') throw new CliError(`'${d.queue}' is a ${queueType}, not the list of a fair lock's queue`, EXIT.WRONG_TYPE);
  if (timeoutType !== 'none' && timeoutType !== 'zset') throw new CliError(`'${d.timeout}' is a ${timeoutType}, not the zset of a fair lock's deadlines`, EXIT.WRONG_TYPE);
  const [tokens, scored] = await Promise.all([redis.lrange(d.queue, 0, -1), redis.zrange(d.timeout, 0, -1, 'WITHSCORES')]);
  const scores = new Map<string, number>();
  for (let i = 0; i + 1 < scored.length; i += 2) scores.set(scored[i]!, Number(scored[i + 1]));
  const queue = tokens.map((token, i): Waiter => {
    const deadline = scores.get(token) ?? null;
    const split = splitToken(token) ?? { clientId: token, threadId: '' };
    return { position: i + 1, token, ...split, deadline, deadlineIn: deadline === null ? null : deadline - now };
  });
  const stale = queue.filter((w) => w.deadlineIn !== null && w.deadlineIn <= 0).length;
  if (stale > 0) base.notes.push(`${stale} waiter(s) past their deadline: presumed dead, purged by the next fair-lock call`);
  const unqueued = [...scores.keys()].filter((token) => !tokens.includes(token));
  if (unqueued.length > 0) base.notes.push(`deadlines without a queue entry: ${unqueued.join(', ')}`);
  const head = queue[0];
  return {
    ...base,
    kind: 'fairLock',
    label: STORAGE.fairLock.label,
    exists: owners.length > 0,
    owners,
    queue,
    // Fair waiters each listen on their own channel; the head's is the one an unlock publishes on.
    channel: head
      ? { name: fairWaiterChannel(base.name, head.token), subscribers: await subscribers(redis, fairWaiterChannel(base.name, head.token)) }
      : { name: fairWaiterChannel(base.name, '<waiter>'), subscribers: 0 },
  };
}

async function fencedLock(redis: Redis, base: Base, owners: Owner[], d: Derived, tokenType: string): Promise<Report> {
  base.keys.token = { key: d.token, exists: true };
  if (tokenType !== 'string') throw new CliError(`'${d.token}' is a ${tokenType}, not a fencing token counter`, EXIT.WRONG_TYPE);
  const token = await redis.get(d.token);
  return {
    ...base,
    kind: 'fencedLock',
    label: STORAGE.fencedLock.label,
    exists: owners.length > 0,
    owners,
    token,
    channel: { name: d.lockChannel, subscribers: await subscribers(redis, d.lockChannel) },
  };
}

async function readWriteLock(redis: Redis, base: Base, fields: Record<string, string>, d: Derived, _type: string): Promise<Report> {
  const mode = fields.mode === 'read' || fields.mode === 'write' ? fields.mode : null;
  if (mode === null) base.notes.push(`unexpected mode ${JSON.stringify(fields.mode)} (Redisson writes read or write)`);
  const owners: Owner[] = [];
  for (const [field, value] of Object.entries(fields)) {
    if (field === 'mode') continue;
    const write = field.endsWith(':write');
    const split = splitToken(write ? field.slice(0, -':write'.length) : field);
    if (!split || !INTEGER.test(value)) {
      base.notes.push(`field ${JSON.stringify(field)} is not an owner token with a hold count`);
      continue;
    }
    const owner: Owner = { field, ...split, holds: Number(value), side: write ? 'write' : 'read' };
    if (!write) {
      const prefix = readerTimeoutPrefix(base.name, field);
      owner.readLeases = await Promise.all(Array.from({ length: owner.holds }, (_, i) => redis.pttl(`${prefix}:${i + 1}`)));
      if (owner.readLeases.length > 0 && owner.readLeases.every((ms) => ms === -2)) {
        base.notes.push(`reader ${field} has no live rwlock_timeout key: a dead reader, dropped at the next read unlock`);
      }
    }
    owners.push(owner);
  }
  return {
    ...base,
    kind: 'readWriteLock',
    label: STORAGE.readWriteLock.label,
    exists: true,
    mode,
    owners,
    channel: { name: d.rwChannel, subscribers: await subscribers(redis, d.rwChannel) },
  };
}

async function expirableSemaphore(redis: Redis, base: Base, available: number, d: Derived, permitsType: string, now: number): Promise<Report> {
  base.keys.permits = { key: d.permits, exists: true };
  if (permitsType !== 'zset') throw new CliError(`'${d.permits}' is a ${permitsType}, not the zset of expirable permits`, EXIT.WRONG_TYPE);
  const scored = await redis.zrangeBuffer(d.permits, 0, -1, 'WITHSCORES');
  const acquired: Permit[] = [];
  for (let i = 0; i + 1 < scored.length; i += 2) {
    const id = scored[i]!;
    const score = Number(scored[i + 1]!.toString());
    const never = score >= PERMIT_NO_EXPIRY;
    if (id.length !== 16) base.notes.push(`permit id ${id.toString('hex')} is ${id.length} bytes, not Redisson's 16`);
    acquired.push({
      id: id.toString('hex'),
      expiresAt: never ? null : score,
      expiresIn: never ? null : score - now,
      expired: !never && score <= now,
    });
  }
  const expired = acquired.filter((p) => p.expired).length;
  if (expired > 0) base.notes.push(`${expired} permit(s) expired, given back by the next semaphore call`);
  return {
    ...base,
    kind: 'permitExpirableSemaphore',
    label: STORAGE.permitExpirableSemaphore.label,
    exists: base.keys.main!.exists,
    permits: available,
    acquired,
    channel: { name: d.semaphoreChannel, subscribers: await subscribers(redis, d.semaphoreChannel) },
  };
}

async function counter(redis: Redis, base: Base, value: number, d: Derived, as: InspectOptions['as']): Promise<Report> {
  const [semaphoreSubs, latchSubs] = await Promise.all([subscribers(redis, d.semaphoreChannel), subscribers(redis, d.latchChannel)]);
  let latch: boolean;
  if (as) {
    latch = as === 'latch';
  } else if (value <= 0) {
    latch = false;
    base.notes.push('a string counter at or below 0: a semaphore (a latch at 0 is deleted); --as latch reads it as a latch');
  } else {
    latch = latchSubs > 0 && semaphoreSubs === 0;
    base.notes.push(
      `Redisson stores a semaphore and a count-down latch alike (a string counter); read as a ${latch ? 'latch: its channel has listeners' : 'semaphore'}` +
        `; --as ${latch ? 'semaphore' : 'latch'} reads it the other way`,
    );
  }
  if (latch) {
    return {
      ...base,
      kind: 'countDownLatch',
      label: STORAGE.countDownLatch.label,
      exists: true,
      count: value,
      channel: { name: d.latchChannel, subscribers: latchSubs },
    };
  }
  return {
    ...base,
    kind: 'semaphore',
    label: STORAGE.semaphore.label,
    exists: true,
    permits: value,
    channel: { name: d.semaphoreChannel, subscribers: semaphoreSubs },
  };
}

/** One line per Redisson object whose keys match `pattern`, found with SCAN (never KEYS). */
export interface Listed {
  name: string;
  kind: Kind | null;
  summary: string;
  /** Derived keys seen for this name (queue, token, ...). */
  related: string[];
}

/** Scans for `pattern` (and the derived keys of names matching it) and inspects every object found. */
export async function list(redis: Redis, pattern: string, options: { count?: number; as?: InspectOptions['as']; now?: number } = {}): Promise<Listed[]> {
  const patterns = pattern === '*' ? ['*'] : [pattern, ...derivedPatterns(pattern)];
  const found = new Map<string, Set<string>>();
  const see = (name: string, key?: string): void => {
    let related = found.get(name);
    if (!related) found.set(name, (related = new Set()));
    if (key) related.add(key);
  };
  for (const match of patterns) {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', match, 'COUNT', options.count ?? 1000);
      cursor = next;
      for (const key of keys) {
        const derived = baseOf(key);
        if (derived) {
          if (derived.role !== 'unlock latch') see(derived.name, key);
        } else see(key);
      }
    } while (cursor !== '0');
  }
  const rows: Listed[] = [];
  for (const [name, related] of [...found].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    try {
      const report = await inspect(redis, name, options);
      rows.push({ name, kind: report.kind, summary: summarize(report, options.now ?? Date.now()), related: [...related] });
    } catch (error) {
      if (!(error instanceof CliError)) throw error;
      // Keys of other data (not Redisson objects) are left out; derived keys without their object are shown.
      if (related.size > 0) rows.push({ name, kind: null, summary: error.message, related: [...related] });
    }
  }
  return rows;
}

/** `12.3 s`, `450 ms`, `no expiry`. */
export function duration(ms: number): string {
  if (ms === -1) return 'no expiry';
  if (ms === -2) return 'expired';
  const abs = Math.abs(ms);
  const text = abs >= 1000 ? `${(abs / 1000).toFixed(1)} s` : `${abs} ms`;
  return ms < 0 ? `${text} ago` : text;
}

/** What a client recorded about an owner, in a few words: `billing pid 4242 "order 42"`, or `no record`. */
export function whoShort(record: RecordedOwner): string {
  if (!record.recorded) return 'no record';
  const pid = record.pid === undefined ? '' : ` pid ${record.pid}`;
  return `${record.service}${pid}${record.label === undefined ? '' : ` ${JSON.stringify(record.label)}`}`;
}

/** What a client recorded about an owner, in full, for `inspect`. */
export function whoLong(record: RecordedOwner, now: number): string {
  if (!record.recorded) return 'no record (a Java client, or one without ownerInfo)';
  const where = [record.host && `on ${record.host}`, record.pid !== undefined && `pid ${record.pid}`, record.version && `ioredisson ${record.version}`]
    .filter(Boolean)
    .join(' ');
  const label = record.label === undefined ? '' : `, ${JSON.stringify(record.label)}`;
  const since = record.since === undefined ? '' : ` since ${record.since} (${duration(now - Date.parse(record.since))} ago)`;
  const extra = Object.entries(record.extra).map(([key, value]) => `, ${key}=${String(value)}`).join('');
  return `${record.service}${where ? ` ${where}` : ''}${label}${since}${extra}`;
}

/** A one-line summary of a report (used by `list`). */
export function summarize(report: Report, _now: number): string {
  const lease = report.ttl >= 0 ? `, ${duration(report.ttl)} left` : report.ttl === -1 ? ', no expiry' : '';
  const holders = (owners: Owner[]): string =>
    owners.length === 0 ? 'free' : `held by ${owners.map((o) => `${o.field} x${o.holds}${o.record ? ` (${whoShort(o.record)})` : ''}`).join(', ')}${lease}`;
  switch (report.kind) {
    case 'lock':
      return holders(report.owners ?? []);
    case 'fencedLock':
      return `${holders(report.owners ?? [])}; token ${report.token ?? 'none'}`;
    case 'fairLock':
      return `${holders(report.owners ?? [])}; ${report.queue?.length ?? 0} queued`;
    case 'readWriteLock':
      return `${report.mode ?? '?'} mode, ${holders(report.owners ?? [])}`;
    case 'semaphore':
      return `${report.permits} permit(s) available${lease}`;
    case 'permitExpirableSemaphore':
      return `${report.permits} available, ${report.acquired?.length ?? 0} acquired`;
    case 'countDownLatch':
      return `count ${report.count}${lease}`;
    case 'fasterMultiLock': {
      const values = report.values ?? [];
      const owners = new Set(values.map((value) => value.owner));
      return `${values.length} value(s) held by ${[...owners].join(', ') || 'nobody'}${lease}`;
    }
  }
}
