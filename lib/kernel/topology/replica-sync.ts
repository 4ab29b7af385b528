import type { Redis } from 'ioredis';
import type { ResolvedReplicaSync } from '../../options';

/** How long a node's replica count is trusted before it is read again, in ms. */
const REFRESH_MS = 10_000;

/** What one `WAIT` (or `WAITAOF`) found. */
export interface SyncOutcome {
  /** Replicas waited for. */
  readonly replicas: number;
  /** Replicas that acknowledged the write (with `aof`: fsynced it). */
  readonly acked: number;
  /** With `aof`: whether the primary fsynced the write to its AOF. */
  readonly local?: boolean;
  /** Whether the write counts as synced: a replica acknowledged it (with `aof`, the primary's fsync too). */
  readonly synced: boolean;
}

/**
 * `replicaSync.aof` is on and the node cannot confirm writes on disk (no WAITAOF, no AOF, no right
 * to it); the server's reply is the `cause`. The runner turns it into `AofSyncUnavailableError`.
 */
export class AofUnavailable extends Error {
  constructor(cause: Error) {
    super(cause.message, { cause });
  }
}

/** One node's replica count: the last value read, and the read in flight. */
interface NodeCount {
  value: number | undefined;
  readAt: number;
  reading: Promise<number> | undefined;
  /** The node refused WAIT (a managed service without it): never wait there again. */
  noWait: boolean;
}

/**
 * Waits for replicas after lock writes (Redisson's `WAIT <connected replicas> <slavesSyncTimeout>`),
 * on the connection that carried the write: the user's connection, or in a cluster the connection of
 * the primary serving the key's slot. The replica count of every node comes from `INFO replication`
 * (`connected_slaves`), cached per node; a node with no replica is never sent a `WAIT`.
 */
export class ReplicaSync {
  private readonly counts = new WeakMap<Redis, NodeCount>();

  constructor(
    /** The connection serving a key's slot (see `Topology.nodeOf`), or `undefined` when none is known. */
    private readonly nodeOf: (key: string) => Redis | undefined,
    readonly settings: ResolvedReplicaSync,
    private readonly onError: (error: unknown, what: string) => void,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * Whether a write to `key` may have replicas to wait for. Synchronous, so that a node known to have
   * none (a standalone server, most of the time) costs a write nothing. Called just before a write
   * is sent (the runner decides then how to read its reply): a count not known yet, or stale, is
   * read then, on the same connection right ahead of the write, at no round trip of its own.
   */
  mayWait(key: string): boolean {
    if (!this.settings.enabled) return false;
    const node = this.nodeOf(key);
    if (!node) return false;
    const entry = this.entryOf(node);
    if (entry.noWait) return false; // WAIT refused (never set with `aof`, which sends no WAIT)
    if (entry.value === undefined || this.now() - entry.readAt >= REFRESH_MS) {
      void this.countOf(node).catch(() => undefined);
    }
    return this.settings.aof || (entry.value !== 0 && this.settings.replicas !== 0);
  }

  /**
   * Waits until the replicas of the node serving `key` acknowledge every write sent on its
   * connection so far (with `aof`: until the node and its replicas have fsynced them), within the
   * timeout; `undefined` when there is nothing to wait for (sync off, no replica, node unknown).
   * @throws {AofUnavailable} with `aof`, when the node cannot confirm writes on disk.
   */
  async sync(key: string): Promise<SyncOutcome | undefined> {
    if (!this.settings.enabled) return undefined;
    const node = this.nodeOf(key);
    if (!node) return undefined;
    if (this.settings.aof) return this.syncAof(node);
    const entry = this.entryOf(node);
    if (entry.noWait) return undefined;
    const connected = await this.countOf(node).catch(() => 0);
    const replicas = this.settings.replicas === 'connected' ? connected : this.settings.replicas;
    if (connected === 0 || replicas === 0) return undefined;
    let acked: number;
    try {
      acked = Number(await node.call('WAIT', replicas, this.settings.timeout));
    } catch (error) {
      if (!isRefused(error, 'WAIT')) throw error;
      entry.noWait = true;
      this.onError(error, 'replica sync: WAIT failed (replica sync is off for this node from now on)');
      return undefined;
    }
    if (acked < replicas) {
      // A replica may have gone: read the count again before judging the next write.
      entry.readAt = -Infinity;
      const now = await this.countOf(node, true).catch(() => connected);
      if (now === 0) return undefined; // no replica left to lose the write to
    }
    return { replicas, acked, synced: acked > 0 };
  }

  /** `WAITAOF 1 <replicas> <timeout>` on `node`: its own fsync, and its replicas' where it has some. */
  private async syncAof(node: Redis): Promise<SyncOutcome> {
    const connected = await this.countOf(node).catch(() => 0);
    const replicas = connected === 0 ? 0 : this.settings.replicas === 'connected' ? connected : this.settings.replicas;
    let reply: unknown;
    try {
      reply = await node.call('WAITAOF', 1, replicas, this.settings.timeout);
    } catch (error) {
      if (isRefused(error, 'WAITAOF')) throw new AofUnavailable(error);
      throw error;
    }
    const [local, acked] = (reply as unknown[]).map(Number) as [number, number];
    if (replicas > 0 && acked === 0) this.entryOf(node).readAt = -Infinity; // a replica may have gone
    return { replicas, acked, local: local > 0, synced: local > 0 && (replicas === 0 || acked > 0) };
  }

  private entryOf(node: Redis): NodeCount {
    let entry = this.counts.get(node);
    if (!entry) {
      entry = { value: undefined, readAt: -Infinity, reading: undefined, noWait: false };
      this.counts.set(node, entry);
    }
    return entry;
  }

  /** The node's connected replicas: cached, read again once stale (the stale value serves meanwhile). */
  private countOf(node: Redis, waitForFresh = false): Promise<number> {
    const entry = this.entryOf(node);
    const fresh = this.now() - entry.readAt < REFRESH_MS;
    if (entry.value !== undefined && fresh) return Promise.resolve(entry.value);
    if (entry.reading) return waitForFresh || entry.value === undefined ? entry.reading : Promise.resolve(entry.value);
    const reading = node.info('replication').then(
      (info) => {
        const value = Number(/^connected_slaves:(\d+)/m.exec(String(info))?.[1] ?? 0);
        entry.value = value;
        entry.readAt = this.now();
        entry.reading = undefined;
        return value;
      },
      (error: unknown) => {
        entry.reading = undefined;
        this.onError(error, 'replica sync: INFO replication failed');
        throw error;
      },
    );
    entry.reading = reading;
    // Reported above; only callers that wait for the refresh get its error (a stale count served
    // instead would leave the rejection unhandled, which ends a Node process).
    reading.catch(() => undefined);
    // A stale count answers at once while the refresh runs; the first read is waited for.
    return entry.value !== undefined && !waitForFresh ? Promise.resolve(entry.value) : reading;
  }
}

/**
 * A server that has no `command` (some managed services; WAITAOF before Redis 7.2), refuses it to
 * this user, or cannot serve it (WAITAOF without `appendonly yes`).
 */
function isRefused(error: unknown, command: string): error is Error {
  return (
    error instanceof Error &&
    /unknown command|not allowed|NOPERM|appendonly is disabled/i.test(error.message) &&
    new RegExp(`\\b${command}\\b`, 'i').test(error.message)
  );
}
