import type { RedisConnection } from '../connection';

/**
 * The per-client record of "who holds it": a hash `ioredisson:client:{<clientId>}` outside Redisson's
 * keys (Java clients never read it), with field `info` (the client's description as JSON), one
 * field `t:<threadId>` per labelled owner scope that holds or waits (`{ label, since }` as JSON), and,
 * with deadlock detection, one field `w:<threadId>` per owner parked longer than its `after`: what it
 * waits for (`[{ lock, since }]` as JSON). One key per client: in Redis Cluster it lives in its own
 * client id's slot.
 */
export function ownerRecordKey(clientId: string): string {
  return `ioredisson:client:{${clientId}}`;
}

const INFO_FIELD = 'info';
const threadField = (threadId: number | string): string => `t:${threadId}`;
const waitField = (threadId: number | string): string => `w:${threadId}`;

/** A labelled owner scope: its label and when it began (epoch ms). */
export interface ScopeLabel {
  readonly label: string;
  readonly since: number;
}

/** A wait an owner recorded: the lock it waits for and when the wait began (epoch ms). */
export interface RecordedWait {
  readonly lock: string;
  readonly since: number;
}

/** Settings of an {@link OwnerRecord}. */
export interface OwnerRecordSettings {
  readonly redis: RedisConnection;
  readonly clientId: string;
  /** The client's description, every filled-in field included. */
  readonly info: Readonly<Record<string, string | number | boolean>>;
  /** TTL of the key in ms; it is written again once a third of it has passed and there is a need. */
  readonly ttl: number;
  /** Told of a write that failed (the next need writes again). */
  onError(error: unknown): void;
}

/**
 * Writes one client's record. Every write is sent without being awaited, in the same tick as the
 * acquire script it accompanies (ioredis writes both in one flush): no acquisition waits for it.
 * The whole record (info and every live label) goes each time, so a key that expired meanwhile
 * comes back whole.
 */
export class OwnerRecord {
  readonly key: string;
  private readonly info: string;
  /** Labels of scopes that held or waited, until their scope ends. */
  private readonly labels = new Map<number, ScopeLabel>();
  /** Labels of ended scopes still in Redis, deleted by the next write. */
  private readonly ended = new Set<number>();
  /** The recorded waits of each owner parked past its deadlock detection's `after`. */
  private readonly waits = new Map<number, RecordedWait[]>();
  private written = false;
  private writtenAt = -Infinity;

  constructor(private readonly settings: OwnerRecordSettings) {
    this.key = ownerRecordKey(settings.clientId);
    this.info = JSON.stringify(settings.info);
  }

  /**
   * Before an attempt of `threadId`: writes the record when the thread's label is not in it yet or a
   * third of the TTL has passed since the last write; otherwise costs nothing.
   */
  touch(threadId: number, label: ScopeLabel | undefined): void {
    const added = label !== undefined && !this.labels.has(threadId);
    if (added) this.labels.set(threadId, label);
    if (added || performance.now() - this.writtenAt >= this.settings.ttl / 3) this.write();
  }

  /** A scope ended: its label leaves the record with the next write (the thread id is never reused). */
  forget(threadId: number): void {
    if (this.labels.delete(threadId)) this.ended.add(threadId);
  }

  /** Records that `threadId` waits for `wait.lock`; written at once. */
  beginWait(threadId: number, wait: RecordedWait): void {
    const waits = this.waits.get(threadId);
    if (waits) waits.push(wait);
    else this.waits.set(threadId, [wait]);
    this.write();
  }

  /** The wait recorded by {@link beginWait} ended; it leaves Redis at once. */
  endWait(threadId: number, wait: RecordedWait): void {
    const waits = this.waits.get(threadId);
    const at = waits?.indexOf(wait) ?? -1;
    if (at < 0) return;
    waits!.splice(at, 1);
    const fail = (error: unknown): void => this.settings.onError(error);
    if (waits!.length > 0)
      return void this.settings.redis.hset(this.key, waitField(threadId), JSON.stringify(waits)).catch(fail);
    this.waits.delete(threadId);
    this.settings.redis.hdel(this.key, waitField(threadId)).catch(fail);
  }

  /** Refreshes the record if it was ever written (called with each lease renewal round). */
  refresh(): void {
    if (this.written) this.write();
  }

  /** Deletes the record (client shutdown); resolves when Redis answered, a failure told to `onError`. */
  async remove(): Promise<void> {
    if (!this.written) return;
    this.written = false;
    await this.settings.redis.del(this.key).catch((error: unknown) => this.settings.onError(error));
  }

  private write(): void {
    const { redis, ttl } = this.settings;
    this.written = true;
    this.writtenAt = performance.now();
    const fields: string[] = [INFO_FIELD, this.info];
    for (const [threadId, label] of this.labels) fields.push(threadField(threadId), JSON.stringify(label));
    for (const [threadId, waits] of this.waits) fields.push(waitField(threadId), JSON.stringify(waits));
    const fail = (error: unknown): void => this.settings.onError(error);
    if (this.ended.size > 0) {
      redis.hdel(this.key, ...[...this.ended].map(threadField)).catch(fail);
      this.ended.clear();
    }
    redis.hset(this.key, ...fields).catch(fail);
    redis.pexpire(this.key, ttl).catch(fail);
  }
}

/** What a client recorded about one owner; `recorded: false` when it recorded nothing (e.g. Java). */
export type RecordedOwner =
  | {
      /** Nothing recorded: a Java client, or one without `ownerInfo`. */
      readonly recorded: false;
    }
  | {
      /** The owner's client recorded itself. */
      readonly recorded: true;
      /** The client's `ownerInfo.service`. */
      readonly service: string;
      /** The client's host name. */
      readonly host?: string;
      /** The client's process id. */
      readonly pid?: number;
      /** The library version of the client. */
      readonly version?: string;
      /** When the client started (ISO 8601). */
      readonly startedAt?: string;
      /** The owner scope's label, if it had one. */
      readonly label?: string;
      /** When the labelled owner scope began (ISO 8601). */
      readonly since?: string;
      /** Extra fields of the client's `ownerInfo`. */
      readonly extra: Readonly<Record<string, string | number | boolean>>;
    };

/** An owner token split: `<clientId>:<threadId>`, a write lock's with `:write`. */
export interface ParsedOwner {
  readonly clientId: string;
  readonly threadId: string;
  readonly write: boolean;
}

/** Splits an owner token (the client id contains no `:`, the thread id is decimal); `null` if it is none. */
export function parseOwner(token: string): ParsedOwner | null {
  const m = /^(.+):(\d+)(:write)?$/.exec(token);
  return m ? { clientId: m[1]!, threadId: m[2]!, write: m[3] !== undefined } : null;
}

const FILLED = new Set(['service', 'host', 'pid', 'version', 'startedAt']);

/**
 * Reads the records of `owners` (owner tokens split): one HMGET per client. Read-only; a record that
 * is missing or unreadable reads as `recorded: false`.
 */
export async function readOwnerRecords(
  redis: RedisConnection,
  owners: readonly ParsedOwner[],
): Promise<RecordedOwner[]> {
  const read = await readPerOwner(redis, owners, [INFO_FIELD], threadField);
  return read.map(([infoText, scopeText]) => {
    const info = parseObject(infoText);
    if (!info || typeof info.service !== 'string') return { recorded: false };
    const scope = parseObject(scopeText);
    const extra: Record<string, string | number | boolean> = {};
    for (const [key, value] of Object.entries(info)) {
      if (!FILLED.has(key) && ['string', 'number', 'boolean'].includes(typeof value))
        extra[key] = value as string | number | boolean;
    }
    return {
      recorded: true,
      service: info.service,
      ...(typeof info.host === 'string' && { host: info.host }),
      ...(typeof info.pid === 'number' && { pid: info.pid }),
      ...(typeof info.version === 'string' && { version: info.version }),
      ...(typeof info.startedAt === 'string' && { startedAt: info.startedAt }),
      ...(typeof scope?.label === 'string' && { label: scope.label }),
      ...(typeof scope?.since === 'number' && { since: new Date(scope.since).toISOString() }),
      extra,
    };
  });
}

/**
 * What each of `owners` waits for, as their clients recorded it (one HMGET per client); an owner
 * whose client recorded nothing (a Java client, detection off) waits for nothing known.
 */
export async function readWaits(redis: RedisConnection, owners: readonly ParsedOwner[]): Promise<RecordedWait[][]> {
  return (await readPerOwner(redis, owners, [], waitField)).map(([text]) => parseWaits(text));
}

/**
 * One HMGET per client of `owners`: the `shared` fields, then `field(threadId)` of each of its owners.
 * Resolves, for each owner, the shared fields' values followed by its own field's.
 */
async function readPerOwner(
  redis: RedisConnection,
  owners: readonly ParsedOwner[],
  shared: readonly string[],
  field: (threadId: string) => string,
): Promise<(string | null)[][]> {
  const threadsOf = new Map<string, string[]>();
  for (const { clientId, threadId } of owners) {
    const threads = threadsOf.get(clientId);
    if (threads) threads.push(threadId);
    else threadsOf.set(clientId, [threadId]);
  }
  const clients = [...threadsOf.keys()];
  const replies = await Promise.all(
    clients.map((clientId) => redis.hmget(ownerRecordKey(clientId), ...shared, ...threadsOf.get(clientId)!.map(field))),
  );
  const read = new Map(clients.map((clientId, i) => [clientId, replies[i]!]));
  return owners.map(({ clientId, threadId }) => {
    const values = read.get(clientId)!;
    return [
      ...values.slice(0, shared.length),
      values[shared.length + threadsOf.get(clientId)!.indexOf(threadId)] ?? null,
    ];
  });
}

/** The waits in a `w:<threadId>` field; anything unreadable reads as none. */
export function parseWaits(text: string | null | undefined): RecordedWait[] {
  if (!text) return [];
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return [];
  }
  if (!Array.isArray(value)) return [];
  return value.filter(
    (wait): wait is RecordedWait =>
      wait !== null &&
      typeof wait === 'object' &&
      typeof (wait as RecordedWait).lock === 'string' &&
      typeof (wait as RecordedWait).since === 'number',
  );
}

function parseObject(text: string | null | undefined): Record<string, unknown> | undefined {
  if (!text) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** One owner of a lock as the lock's keys show it. */
export interface LockSlot {
  /** `holder`: counted in the lock's hash; `waiter`: queued (fair locks). */
  readonly role: 'holder' | 'waiter';
  /** The owner token, as stored. */
  readonly owner: string;
  /** The client id part of the token (Redisson's UUID). */
  readonly clientId: string;
  /** The thread id part of the token. */
  readonly threadId: number;
  /** Hold count; 0 for a waiter. */
  readonly holds: number;
  /** Read/write locks: the side this owner holds. */
  readonly mode?: 'read' | 'write';
  /** Waiters: place in the queue, from 1. */
  readonly position?: number;
}

/**
 * One holder or waiter of a lock, with what its client recorded about it (`recorded: false` for a
 * Java client or any client without `ownerInfo`).
 * @category Locks
 */
export type LockHolder = LockSlot & RecordedOwner;

/**
 * The holders in a lock hash's `fields` (other fields, such as a read/write lock's `mode`, are
 * skipped) and the `queued` owner tokens, with their clients' records.
 */
export async function resolveHolders(
  redis: RedisConnection,
  fields: Record<string, string>,
  queued: readonly string[],
): Promise<LockHolder[]> {
  const slots: LockSlot[] = [];
  const parsed: ParsedOwner[] = [];
  const add = (owner: ParsedOwner, slot: Omit<LockSlot, 'clientId' | 'threadId'>): void => {
    parsed.push(owner);
    slots.push({ ...slot, clientId: owner.clientId, threadId: Number(owner.threadId) });
  };
  const shared = 'mode' in fields;
  for (const [field, value] of Object.entries(fields)) {
    const owner = parseOwner(field);
    if (!owner || !/^\d+$/.test(value)) continue;
    const mode = owner.write ? 'write' : shared ? 'read' : undefined;
    add(owner, { role: 'holder', owner: field, holds: Number(value), ...(mode && { mode }) });
  }
  queued.forEach((token, i) => {
    const owner = parseOwner(token);
    if (owner) add(owner, { role: 'waiter', owner: token, holds: 0, position: i + 1 });
  });
  const records = await readOwnerRecords(redis, parsed);
  return slots.map((slot, i) => ({ ...slot, ...records[i]! }));
}
