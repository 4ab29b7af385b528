import { randomUUID } from 'node:crypto';
import calculateSlot from 'cluster-key-slot';
import mitt, { type Emitter, type Handler } from 'mitt';
import { isCluster, keyPrefixOf, type RedisConnection } from './connection';
import { ClientClosedError, InvalidArgumentError } from './errors';
import type { RedissonEvents } from './events';
import type { LeaseKind } from './leases/lease';
import { LeaseTracker } from './leases/tracker';
import type { Closable } from './locks/acquisition';
import type { LockContext, LockKind } from './locks/context';
import { HoldLedger } from './locks/hold-ledger';
import { RLock } from './locks/rlock';
import { checkName, resolveOptions, type RedissonOptions, type ResolvedOptions } from './options';
import { OwnerScopes } from './owner';
import { PubSubManager } from './pubsub/manager';
import { ScriptRunner } from './scripts/runner';

/** Counts of what a client is holding on to, for monitoring and leak checks. */
export interface ClientDiagnostics {
  /** Channels subscribed on the subscriber connection. */
  channels: number;
  /** Waiters parked on those channels. */
  waiters: number;
  /** Leases tracked (renewed by the watchdog, or awaiting the end of an explicit lease). */
  leases: number;
}

/**
 * Entry point: owns the client id, the subscriber connection, the lease watchdog and the owner
 * scopes, and makes the locks. The `redis` connection stays the caller's: `shutdown()` leaves it open.
 */
export class RedissonClient {
  /** This client's id (UUID v4), the first half of every owner token. */
  readonly id: string = randomUUID();
  /** The options in force, defaults filled in. */
  readonly options: ResolvedOptions;
  private readonly emitter: Emitter<RedissonEvents> = mitt<RedissonEvents>();
  private readonly lifetime = new AbortController();
  private readonly pending = new Set<Closable>();
  private readonly scopes = new OwnerScopes();
  private readonly pubsub: PubSubManager;
  private readonly leases: LeaseTracker;
  private readonly scripts: ScriptRunner;
  private readonly ledgers = new Map<LockKind, HoldLedger>();
  private readonly context: LockContext;

  constructor(redis: RedisConnection, options?: RedissonOptions) {
    if (redis === null || typeof redis !== 'object' || typeof (redis as { evalsha?: unknown }).evalsha !== 'function') {
      throw new InvalidArgumentError('RedissonClient needs an ioredis Redis or Cluster connection');
    }
    this.options = resolveOptions(options);
    const { logger } = this.options;
    const sharded = useShardedPubSub(redis, this.options.shardedPubSub);
    this.scripts = new ScriptRunner(redis, sharded.then((on) => (on ? 'SPUBLISH' : 'PUBLISH')), {
      replicaSync: this.options.replicaSync,
      onError: (error, what) => logger.debug(`replica sync: ${what}`, { error }),
    });
    this.pubsub = new PubSubManager(redis, {
      sharded,
      subscriptionTimeout: this.options.subscriptionTimeout,
      onReconnect: (channels) => this.emit('subscriberReconnected', { channels }),
      onError: (error, what) => logger.debug(`pub/sub: ${what} failed`, { error }),
    });
    this.leases = new LeaseTracker({
      renewalLease: this.options.lockWatchdogTimeout,
      batchSize: this.options.lockWatchdogBatchSize,
      groupOf: slotGrouping(redis),
      onLost: (error) => {
        this.scopes.forgetUnscoped(error.lockName, Number(error.owner.slice(this.id.length + 1)));
        this.emit('lockLost', { name: error.lockName, owner: error.owner, error });
      },
      onRenewalError: (error) => logger.debug('lease renewal failed; retrying next period', { error }),
    });
    this.context = {
      clientId: this.id,
      options: this.options,
      scripts: this.scripts,
      leases: this.leases,
      scopes: this.scopes,
      logger,
      pubsub: this.pubsub,
      lifetime: this.lifetime.signal,
      pending: this.pending,
      ledger: (kind) => this.ledgerOf(kind),
      emit: (type, event) => this.emit(type, event),
    };
  }

  /** The reentrant lock called `name` (Redisson's `getLock`). Cheap: no Redis call. */
  getLock(name: string): RLock {
    checkName(name);
    this.assertOpen();
    return new RLock(this.context, name);
  }

  /**
   * Runs `fn` in an owner scope: every lock taken by code awaited inside it belongs to one logical
   * thread and re-enters. Inside an open scope, runs in that scope.
   */
  run<T>(fn: () => T): T {
    if (typeof fn !== 'function') throw new InvalidArgumentError('run() needs a function');
    this.assertOpen();
    return this.scopes.run(fn);
  }

  /** Subscribes to a client event. */
  on<K extends keyof RedissonEvents>(type: K, handler: Handler<RedissonEvents[K]>): this {
    this.emitter.on(type, handler);
    return this;
  }

  /** Unsubscribes from a client event. */
  off<K extends keyof RedissonEvents>(type: K, handler: Handler<RedissonEvents[K]>): this {
    this.emitter.off(type, handler);
    return this;
  }

  /** What the client is holding on to right now. */
  diagnostics(): ClientDiagnostics {
    return { ...this.pubsub.stats, leases: this.leases.size };
  }

  /**
   * Stops the watchdog, closes the subscriber connection, deletes the unlock latches still queued
   * and rejects pending waits with {@link ClientClosedError}. Locks still held are not released (they
   * expire with their lease); their handles' signals abort and `lockLost` is emitted for each. The
   * caller's `redis` connection is left open. Idempotent.
   */
  async shutdown(): Promise<void> {
    if (this.lifetime.signal.aborted) return;
    const closed = new ClientClosedError();
    this.lifetime.abort(closed);
    for (const acquisition of [...this.pending]) acquisition.close(closed);
    this.leases.shutdown();
    await Promise.all([this.pubsub.shutdown(), this.scripts.flush()]);
    this.emitter.all.clear();
  }

  /** The hold ledger of `kind`, made on first use with a lease kind that renews through `kind`. */
  private ledgerOf(kind: LockKind): HoldLedger {
    let ledger = this.ledgers.get(kind);
    if (!ledger) {
      const leaseKind: LeaseKind = { noun: 'Lock', renew: (batch, leaseTime) => kind.renew(this.scripts, batch, leaseTime) };
      ledger = new HoldLedger(this.leases, leaseKind);
      this.ledgers.set(kind, ledger);
    }
    return ledger;
  }

  private assertOpen(): void {
    this.lifetime.signal.throwIfAborted();
  }

  /** Emits without letting a throwing listener break the caller; its error surfaces asynchronously. */
  private emit<K extends keyof RedissonEvents>(type: K, event: RedissonEvents[K]): void {
    try {
      this.emitter.emit(type, event);
    } catch (error) {
      queueMicrotask(() => {
        throw error;
      });
    }
  }
}

/** Renewal batches must not span cluster slots; outside a cluster any grouping will do. */
function slotGrouping(redis: RedisConnection): (name: string) => number {
  if (!isCluster(redis)) return () => 0;
  const prefix = keyPrefixOf(redis);
  return (name) => calculateSlot(prefix + name);
}

/** Resolves whether to use sharded pub/sub: Redisson's rule is cluster mode on a server that has it. */
async function useShardedPubSub(redis: RedisConnection, mode: ResolvedOptions['shardedPubSub']): Promise<boolean> {
  if (mode !== 'auto') return mode === 'on';
  if (!isCluster(redis)) return false;
  try {
    await redis.call('PUBSUB', 'SHARDNUMSUB');
    return true;
  } catch {
    return false;
  }
}
