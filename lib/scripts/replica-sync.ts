import calculateSlot from 'cluster-key-slot';
import type { Redis } from 'ioredis';
import { isCluster, keyPrefixOf, type RedisConnection } from '../connection';
import type { ResolvedReplicaSync } from '../options';

/** How long a node's replica count is trusted before it is read again, in ms. */
const REFRESH_MS = 10_000;

/** What one `WAIT` found. */
export interface SyncOutcome {
  /** Replicas waited for. */
  readonly replicas: number;
  /** Replicas that acknowledged the write. */
  readonly acked: number;
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
  private readonly prefix: string;

  constructor(
    private readonly redis: RedisConnection,
    readonly settings: ResolvedReplicaSync,
    private readonly onError: (error: unknown, what: string) => void,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.prefix = keyPrefixOf(redis);
  }

  /**
   * Whether a write to `key` may have replicas to wait for. Synchronous, so that a node known to have
   * none (a standalone server, most of the time) costs a write nothing. Called right after a write
   * is sent: a count not known yet, or stale, is read then, behind the write on the same connection,
   * at no round trip of its own.
   */
  mayWait(key: string): boolean {
    if (!this.settings.enabled) return false;
    const node = this.nodeOf(key);
    if (!node) return false;
    const entry = this.entryOf(node);
    if (entry.noWait) return false;
    if (entry.value === undefined || this.now() - entry.readAt >= REFRESH_MS) {
      void this.countOf(node).catch(() => undefined);
    }
    return entry.value !== 0 && this.settings.replicas !== 0;
  }

  /**
   * Waits until the replicas of the node serving `key` acknowledge every write sent on its
   * connection so far, within the timeout; `undefined` when there is nothing to wait for (sync off,
   * no replica, node unknown).
   */
  async sync(key: string): Promise<SyncOutcome | undefined> {
    if (!this.settings.enabled) return undefined;
    const node = this.nodeOf(key);
    if (!node) return undefined;
    const entry = this.entryOf(node);
    if (entry.noWait) return undefined;
    const connected = await this.countOf(node).catch(() => 0);
    const replicas = this.settings.replicas === 'connected' ? connected : this.settings.replicas;
    if (connected === 0 || replicas === 0) return undefined;
    let acked: number;
    try {
      acked = Number(await node.call('WAIT', replicas, this.settings.timeout));
    } catch (error) {
      if (!isUnsupported(error)) throw error;
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
    return { replicas, acked };
  }

  /** The connection serving `key`'s slot (a cluster's primary for it), or the user's connection. */
  private nodeOf(key: string): Redis | undefined {
    const redis = this.redis;
    if (!isCluster(redis)) return redis;
    const slot = calculateSlot(this.prefix + key);
    const address = redis.slots[slot]?.[0];
    if (!address) return undefined;
    return redis.nodes('master').find((node) => `${node.options.host}:${node.options.port}` === address);
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
    // A stale count answers at once while the refresh runs; the first read is waited for.
    return entry.value !== undefined && !waitForFresh ? Promise.resolve(entry.value) : reading;
  }
}

/** A server without WAIT (some managed services) or one that refuses it. */
function isUnsupported(error: unknown): boolean {
  return error instanceof Error && /unknown command|not allowed|NOPERM/i.test(error.message) && /wait/i.test(error.message);
}
