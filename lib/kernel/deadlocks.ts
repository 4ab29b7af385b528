import type { RedisConnection } from '../connection';
import { DeadlockError, type DeadlockWait } from '../errors';
import {
  parseOwner,
  readOwnerRecords,
  readWaits,
  type OwnerRecord,
  type ParsedOwner,
  type RecordedWait,
} from './owner-record';

/** Longest delay between two searches of one wait, in ms (the first repeat comes `after` ms after the first search, and each delay doubles). */
const RESEARCH_MAX_MS = 30_000;
/** Most owners one search visits: bounds its reads in a large wait-for graph. */
const MAX_OWNERS = 256;

/** Settings of a {@link DeadlockDetector}. */
export interface DeadlockSettings {
  readonly redis: RedisConnection;
  readonly clientId: string;
  /** Where this client's waits are recorded for the searches of others. */
  readonly record: OwnerRecord;
  /** How long in ms a waiter is parked before its wait is recorded and searched. */
  readonly after: number;
  /** Told of a search that failed (the next one tries again) and of a cycle another wait gives up for. */
  note(message: string, details: Record<string, unknown>): void;
}

/**
 * One link of the wait-for graph: `owner` (`<clientId>:<threadId>`) waits for `lock`, since `since`
 * (epoch ms), and every holder of `lock` is a link further.
 */
interface Link {
  readonly owner: string;
  readonly lock: string;
  readonly since: number;
}

/**
 * Deadlock detection across clients (option `deadlockDetection`). A waiter parked for `after` ms
 * records what its owner waits for in its client's owner record, then searches the wait-for graph:
 * the holders of its lock (the `<clientId>:<threadId>` fields of the lock's hash, which is where every
 * lock kind of the family counts its holds), what those owners wait for as their clients recorded it,
 * and so on. A path back to the waiter's own owner is a cycle; read a second time and still there,
 * it is one, and its youngest wait (latest `since`, then greatest owner: the same rule in every
 * client) rejects with {@link DeadlockError}. The search repeats on a doubling delay while the
 * waiter stays parked: a cycle whose last link is recorded later is found by that link's waiter.
 */
export class DeadlockDetector {
  constructor(private readonly settings: DeadlockSettings) {}

  /**
   * Watches the wait of `threadId` for `lock`, begun now: `fail` is called should the wait be the
   * one of a cycle that gives up. Returns what ends the watch (the wait ended), once.
   */
  watch(lock: string, threadId: number, fail: (error: DeadlockError) => void): () => void {
    const watched = new WatchedWait(this.settings, lock, threadId, fail);
    return () => watched.stop();
  }
}

/** One parked wait under watch: its timer, and its record once `after` passed. */
class WatchedWait {
  private readonly since = Date.now();
  private readonly owner: string;
  private timer: NodeJS.Timeout | undefined;
  private recorded: RecordedWait | undefined;
  private searches = 0;
  private stopped = false;

  constructor(
    private readonly settings: DeadlockSettings,
    private readonly lock: string,
    private readonly threadId: number,
    private readonly fail: (error: DeadlockError) => void,
  ) {
    this.owner = `${settings.clientId}:${threadId}`;
    this.schedule(settings.after);
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.recorded) this.settings.record.endWait(this.threadId, this.recorded);
  }

  /** @internal The timer fired: record the wait (the first time), then search. */
  fire(): void {
    this.timer = undefined;
    if (this.stopped) return;
    const { record } = this.settings;
    if (!this.recorded) {
      this.recorded = { lock: this.lock, since: this.since };
      record.beginWait(this.threadId, this.recorded);
    } else {
      // A long wait keeps its record alive, even in a client that renews no lease meanwhile.
      record.touch(this.threadId, undefined);
    }
    void this.search();
  }

  private async search(): Promise<void> {
    const { redis } = this.settings;
    const mine: Link = { owner: this.owner, lock: this.lock, since: this.since };
    try {
      const cycle = await findCycle(redis, mine);
      if (cycle && !this.stopped && (await stillThere(redis, cycle))) {
        const victim = youngest(cycle);
        if (victim === 0) {
          const error = new DeadlockError(this.lock, await describe(redis, cycle));
          if (!this.stopped) return this.fail(error);
        } else {
          this.settings.note('a deadlock was found; its youngest wait gives up', {
            lock: this.lock,
            owner: this.owner,
            youngest: cycle[victim],
          });
        }
      }
    } catch (error) {
      this.settings.note('a deadlock search failed; the next one tries again', {
        lock: this.lock,
        owner: this.owner,
        error,
      });
    }
    if (this.stopped) return;
    this.schedule(Math.min(this.settings.after * 2 ** this.searches, RESEARCH_MAX_MS));
    this.searches += 1;
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(fireWatch, ms, this);
    this.timer.unref();
  }
}

function fireWatch(watched: WatchedWait): void {
  watched.fire();
}

/**
 * Searches, breadth first, for a path of waits from `start` back to its owner; resolves the cycle's
 * links in order (each owner waits for a lock held by the next owner, the last's held by the first),
 * `start` first, or `undefined`.
 */
async function findCycle(redis: RedisConnection, start: Link): Promise<Link[] | undefined> {
  /** For each owner reached: the link that waits for what it holds. */
  const reachedBy = new Map<string, Link>();
  let frontier = [start];
  while (frontier.length > 0 && reachedBy.size < MAX_OWNERS) {
    const holders = await holdersOf(
      redis,
      frontier.map((link) => link.lock),
    );
    const next: ParsedOwner[] = [];
    for (const link of frontier) {
      for (const holder of holders.get(link.lock)!) {
        if (holder === start.owner) return pathTo(link, start.owner, reachedBy);
        if (reachedBy.has(holder)) continue;
        reachedBy.set(holder, link);
        next.push(parseOwner(holder)!);
      }
    }
    const waits = await readWaits(redis, next);
    frontier = next.flatMap((owner, i) => waits[i]!.map(({ lock, since }) => ({ owner: ownerOf(owner), lock, since })));
  }
  return undefined;
}

/** The links from the start's owner to `last`, in order. */
function pathTo(last: Link, startOwner: string, reachedBy: ReadonlyMap<string, Link>): Link[] {
  const links = [last];
  for (let owner = last.owner; owner !== startOwner;) {
    const link = reachedBy.get(owner)!;
    links.unshift(link);
    owner = link.owner;
  }
  return links;
}

/** The holders of each of `locks`: the owners (`<clientId>:<threadId>`, a write lock's too) counted in its hash. */
export async function holdersOf(redis: RedisConnection, locks: readonly string[]): Promise<Map<string, Set<string>>> {
  const names = [...new Set(locks)];
  const hashes = await Promise.all(names.map((name) => redis.hgetall(name)));
  return new Map(
    names.map((name, i) => {
      const owners = new Set<string>();
      for (const [field, value] of Object.entries(hashes[i]!)) {
        const owner = parseOwner(field);
        if (owner && /^\d+$/.test(value)) owners.add(ownerOf(owner));
      }
      return [name, owners];
    }),
  );
}

const ownerOf = ({ clientId, threadId }: ParsedOwner): string => `${clientId}:${threadId}`;

/**
 * Reads the cycle a second time: every lock still held by the next owner, every wait but the first
 * (the searcher's own, still parked) still recorded as it was. A link that ended between the two
 * reads (a wait acquired, given up, a hold released) was no deadlock.
 */
async function stillThere(redis: RedisConnection, cycle: readonly Link[]): Promise<boolean> {
  const others = cycle.slice(1);
  const [holders, waits] = await Promise.all([
    holdersOf(
      redis,
      cycle.map((link) => link.lock),
    ),
    readWaits(
      redis,
      others.map((link) => parseOwner(link.owner)!),
    ),
  ]);
  const held = cycle.every((link, i) => holders.get(link.lock)!.has(cycle[(i + 1) % cycle.length]!.owner));
  const waiting = others.every((link, i) =>
    waits[i]!.some(({ lock, since }) => lock === link.lock && since === link.since),
  );
  return held && waiting;
}

/** The index of the cycle's youngest wait: latest `since`, ties to the greatest owner. */
function youngest(cycle: readonly Link[]): number {
  let at = 0;
  cycle.forEach((link, i) => {
    const best = cycle[at]!;
    if (link.since > best.since || (link.since === best.since && link.owner > best.owner)) at = i;
  });
  return at;
}

/** The cycle as {@link DeadlockError} lists it: each wait with what its client recorded. */
async function describe(redis: RedisConnection, cycle: readonly Link[]): Promise<DeadlockWait[]> {
  const records = await readOwnerRecords(
    redis,
    cycle.map((link) => parseOwner(link.owner)!),
  );
  return cycle.map((link, i) => {
    const record = records[i]!;
    return {
      owner: link.owner,
      lockName: link.lock,
      since: new Date(link.since).toISOString(),
      ...(record.recorded && {
        service: record.service,
        ...(record.host !== undefined && { host: record.host }),
        ...(record.pid !== undefined && { pid: record.pid }),
        ...(record.label !== undefined && { label: record.label }),
      }),
    };
  });
}
