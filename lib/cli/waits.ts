import type { Redis } from 'ioredis';
import { holdersOf } from '../kernel/deadlocks';
import { parseOwner, parseWaits, readOwnerRecords, type RecordedOwner } from '../kernel/owner-record';

/** One recorded wait: an owner parked past its client's `deadlockDetection.after` on a lock. */
export interface WaitRow {
  /** The waiting owner, `<clientId>:<threadId>`. */
  owner: string;
  clientId: string;
  threadId: string;
  /** The lock it waits for. */
  lock: string;
  /** When the wait began (ISO 8601). */
  since: string;
  /** How long it has waited, in ms. */
  waitingMs: number;
  /** The owners holding the lock now. */
  heldBy: string[];
  /** Whether the wait is part of a cycle of the wait-for graph: a deadlock. */
  inCycle: boolean;
  /** What the owner's client recorded about it. */
  record: RecordedOwner;
}

/** The wait-for graph the clients with deadlock detection recorded. */
export interface WaitsReport {
  waits: WaitRow[];
  /** Each deadlock: the owners of one strongly connected part of the graph, sorted. */
  cycles: string[][];
}

/** The owner records' key pattern; their client id is the hash tag. */
const RECORDS = 'ioredisson:client:{*}';

/**
 * Reads every owner record (SCAN, never KEYS) for the waits it lists, the holders of each lock waited
 * for, and marks the cycles. Read-only. Only clients with `deadlockDetection` record waits, and only
 * those parked longer than their `after`.
 */
export async function waits(redis: Redis, options: { count?: number; now?: number } = {}): Promise<WaitsReport> {
  const now = options.now ?? Date.now();
  const found: Omit<WaitRow, 'heldBy' | 'inCycle' | 'record'>[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', RECORDS, 'COUNT', options.count ?? 1000);
    cursor = next;
    for (const key of keys) {
      const clientId = key.slice(RECORDS.length - 2, -1);
      for (const [field, value] of Object.entries(await redis.hgetall(key))) {
        if (!field.startsWith('w:')) continue;
        const threadId = field.slice(2);
        for (const { lock, since } of parseWaits(value)) {
          found.push({
            owner: `${clientId}:${threadId}`,
            clientId,
            threadId,
            lock,
            since: new Date(since).toISOString(),
            waitingMs: now - since,
          });
        }
      }
    }
  } while (cursor !== '0');
  const order = (wait: { since: string; owner: string }): string => `${wait.since} ${wait.owner}`;
  found.sort((a, b) => (order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : 0));
  const holders = await holdersOf(
    redis,
    found.map((wait) => wait.lock),
  );
  const records = await readOwnerRecords(
    redis,
    found.map((wait) => parseOwner(wait.owner)!),
  );
  const edges = new Map<string, Set<string>>();
  for (const wait of found) {
    const targets = edges.get(wait.owner) ?? new Set<string>();
    for (const holder of holders.get(wait.lock)!) targets.add(holder);
    edges.set(wait.owner, targets);
  }
  const cycles = cyclesOf(edges);
  const inCycle = new Set(cycles.flat());
  return {
    waits: found.map((wait, i) => ({
      ...wait,
      heldBy: [...holders.get(wait.lock)!].sort(),
      inCycle: inCycle.has(wait.owner),
      record: records[i]!,
    })),
    cycles,
  };
}

/**
 * The strongly connected parts of the graph that are cycles (more than one owner, or an owner waiting
 * for itself), by Tarjan's algorithm; each sorted, and in the order of their least owner.
 */
function cyclesOf(edges: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (owner: string): void => {
    index.set(owner, index.size);
    low.set(owner, index.get(owner)!);
    stack.push(owner);
    onStack.add(owner);
    for (const next of edges.get(owner) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(owner, Math.min(low.get(owner)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(owner, Math.min(low.get(owner)!, index.get(next)!));
      }
    }
    if (low.get(owner) !== index.get(owner)) return;
    const part: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      part.push(member);
    } while (member !== owner);
    if (part.length > 1 || edges.get(owner)?.has(owner)) cycles.push(part.sort());
  };
  for (const owner of edges.keys()) if (!index.has(owner)) visit(owner);
  return cycles.sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
}
