import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { basename } from 'node:path';
import { version } from '../package.json';
import mitt, { type Emitter, type Handler } from 'mitt';
import type { RedisConnection } from './connection';
import { ClientClosedError, InvalidArgumentError } from './errors';
import type { RedissonEvents } from './events';
import type { LeaseKind } from './kernel/leases/lease';
import { LeaseTracker, RENEWAL_CALLS_IN_FLIGHT } from './kernel/leases/tracker';
import type { Closable, ReplyBound } from './kernel/acquisition';
import type { BaseLock } from './kernel/lock';
import type { ClientLocal, ClientContext, HoldKind } from './kernel/context';
import type { RFasterMultiLock } from './kinds/faster-multi-lock';
import type { RFairLock } from './kinds/fair-lock';
import type { RFencedLock } from './kinds/fenced-lock';
import { HoldLedger } from './kernel/hold-ledger';
import type { RMultiLock } from './kinds/multi-lock';
import type { RNonReentrantFairLock } from './kinds/non-reentrant-fair-lock';
import type { RNonReentrantLock } from './kinds/non-reentrant-lock';
import type { RReadWriteLock } from './kinds/read-write-lock';
import type { RRedLock } from './kinds/red-lock';
import { KINDS } from './kinds/registry';
import type { RLock } from './kinds/rlock';
import type { RSpinLock, BackOffOptions } from './kinds/spin-lock';
import type { MultiLockValue } from './kinds/values/kryo';
import { resolveOptions, resolveScopeOptions, type RedissonOptions, type ResolvedOptions } from './options';
import { emitHoldLost, type Emit } from './kernel/hold-events';
import { OwnerScopes, type ScopeOptions } from './owner';
import { DeadlockDetector } from './kernel/deadlocks';
import { OwnerRecord } from './kernel/owner-record';
import { PubSubManager } from './kernel/pubsub/manager';
import { ScriptRunner } from './kernel/scripts/runner';
import type { RCountDownLatch } from './kinds/count-down-latch';
import type { RPermitExpirableSemaphore } from './kinds/permit-expirable-semaphore';
import type { RSemaphore } from './kinds/semaphore';
import { Topology } from './kernel/topology/topology';
import { TimerQueue } from './kernel/timer-queue';
import { LinkedSet } from './kernel/linked-set';

/**
 * Longest `RedissonClient.shutdown()` waits for Redis (the subscriber's close, the deletion of
 * unlock latches), in ms: it returns within it even when Redis does not answer.
 * @example
 * ```ts
 * await Promise.race([redisson.shutdown(), sleep(SHUTDOWN_BOUND_MS + 100)]); // never needs the sleep
 * ```
 * @category Client
 */
export const SHUTDOWN_BOUND_MS = 1_000;

/**
 * Counts of what a client is holding on to, for monitoring and leak checks.
 * @example
 * ```ts
 * const { channels, waiters, leases } = redisson.diagnostics();
 * ```
 * @category Client
 */
export interface ClientDiagnostics {
  /** Channels subscribed on the subscriber connection. */
  channels: number;
  /** Calls parked on those channels; each `await` of a latch counts, though a client's wait as one. */
  waiters: number;
  /** Leases tracked (renewed by the watchdog, or awaiting the end of an explicit lease). */
  leases: number;
}

/**
 * Entry point: owns the client id, the subscriber connection, the lease watchdog and the owner
 * scopes, and makes the locks. The `redis` connection stays the caller's: `shutdown()` leaves it open.
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * import { RedissonClient } from 'ioredisson';
 *
 * const redis = new Redis('redis://127.0.0.1:6379');
 * const redisson = new RedissonClient(redis, { lockWatchdogTimeout: 10_000 });
 * try {
 *   await redisson.getLock('report:daily').using(() => buildReport());
 * } finally {
 *   await redisson.shutdown(); // `redis` is still open: close it yourself
 *   redis.disconnect();
 * }
 * ```
 * @category Client
 */
export class RedissonClient {
  /** This client's id (UUID v4), the first half of every owner token. */
  readonly id: string = randomUUID();
  /** The options in force, defaults filled in. */
  readonly options: ResolvedOptions;
  private readonly emitter: Emitter<RedissonEvents> = mitt<RedissonEvents>();
  /** Emits without letting a throwing listener break the caller; its error surfaces asynchronously. */
  private readonly emitEvent: Emit = Object.assign(
    <K extends keyof RedissonEvents>(type: K, event: RedissonEvents[K]): void => {
      try {
        this.emitter.emit(type, event);
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    },
    {
      heard: (type: keyof RedissonEvents): boolean =>
        this.emitter.all.size > 0 && (hasHandlers(this.emitter, type) || hasHandlers(this.emitter, '*')),
    },
  );
  private readonly lifetime = new AbortController();
  private readonly pending = new LinkedSet<Closable>();
  private readonly scopes: OwnerScopes;
  private readonly ownerRecord: OwnerRecord | undefined;
  private readonly deadlocks: DeadlockDetector | undefined;
  private readonly pubsub: PubSubManager;
  private readonly leases: LeaseTracker;
  private readonly scripts: ScriptRunner;
  private readonly ledgers = new Map<HoldKind, HoldLedger>();
  private readonly locals = new Map<ClientLocal<unknown>, unknown>();
  private readonly context: ClientContext;

  /**
   * @param redis an ioredis `Redis` or `Cluster` connection, used for scripts; the subscriber
   *   connection is duplicated from it.
   * @param options see {@link RedissonOptions}; every field has a default.
   * @throws {InvalidArgumentError} when `redis` is not an ioredis connection, for a bad option, or for a
   *   `keyPrefix` without a hash tag on a Cluster.
   */
  constructor(redis: RedisConnection, options?: RedissonOptions) {
    if (redis === null || typeof redis !== 'object' || typeof (redis as { evalsha?: unknown }).evalsha !== 'function') {
      throw new InvalidArgumentError('RedissonClient needs an ioredis Redis or Cluster connection');
    }
    this.options = resolveOptions(options);
    const { logger } = this.options;
    const topology = new Topology(redis, {
      shardedPubSub: this.options.shardedPubSub,
      replicaSync: this.options.replicaSync,
      onError: (error, what) => logger.debug(`topology: ${what}`, { error }),
    });
    this.scripts = new ScriptRunner(topology, { onError: (error, what) => logger.debug(`scripts: ${what}`, { error }) });
    const timers = new TimerQueue();
    this.pubsub = new PubSubManager(topology, {
      subscriptionTimeout: this.options.subscriptionTimeout,
      timers,
      onReconnect: (channels) => this.emitEvent('subscriberReconnected', { channels }),
      onError: (error, what) => logger.debug(`pub/sub: ${what} failed`, { error }),
    });
    const { ownerInfo, deadlockDetection } = this.options;
    // Deadlock detection records waits in the owner record; without ownerInfo it names the main script.
    const described = ownerInfo ?? (deadlockDetection && { service: mainScriptName() });
    this.ownerRecord = described && new OwnerRecord({
      redis,
      clientId: this.id,
      info: { host: hostname(), pid: process.pid, version, startedAt: new Date().toISOString(), ...described },
      ttl: 2 * this.options.lockWatchdogTimeout,
      onError: (error) => logger.debug('writing the owner record failed; the next need writes it again', { error }),
    });
    const record = this.ownerRecord;
    this.deadlocks = deadlockDetection && record && new DeadlockDetector({
      redis,
      clientId: this.id,
      record,
      after: deadlockDetection.after,
      note: (message, details) => logger.debug(`deadlock detection: ${message}`, details),
    });
    this.scopes = new OwnerScopes(record && ((threadId) => record.forget(threadId)));
    this.leases = new LeaseTracker({
      onRound: record && (() => record.refresh()),
      renewalLease: this.options.lockWatchdogTimeout,
      batchSize: this.options.lockWatchdogBatchSize,
      callsInFlight: RENEWAL_CALLS_IN_FLIGHT,
      groupOf: topology.slotOf,
      onLost: (error, lease) => {
        emitHoldLost(this.emitEvent, { kind: lease.kindName, name: lease.name, owner: lease.owner }, error);
      },
      onRenewalError: (error) => logger.debug('lease renewal failed; retrying next period', { error }),
    });
    // A connection ready again may face a server restarted empty: check every lease at once.
    const onReady = (): void => this.leases.renewNow();
    redis.on('ready', onReady);
    this.lifetime.signal.addEventListener('abort', () => redis.off('ready', onReady), { once: true });
    this.context = {
      clientId: this.id,
      options: this.options,
      scripts: this.scripts,
      leases: this.leases,
      scopes: this.scopes,
      ownerRecord: this.ownerRecord,
      deadlocks: this.deadlocks,
      logger,
      pubsub: this.pubsub,
      lifetime: this.lifetime.signal,
      pending: this.pending,
      replyBound: replyBoundOf(this.options, this.scripts),
      ledger: (kind) => this.ledgerOf(kind),
      local: <T>(local: ClientLocal<T>) => this.localOf(local),
      emit: this.emitEvent,
      timers,
    };
  }

  /**
   * The reentrant lock called `name` (Redisson's `getLock`). Cheap: no Redis call.
   * @throws {InvalidArgumentError} for a bad name.
   * @throws {ClientClosedError} after `shutdown()`.
   * @example
   * ```ts
   * const lock = redisson.getLock('order:42');
   * const receipt = await lock.using(() => charge(42), { waitTime: 5_000 });
   * ```
   */
  getLock(name: string): RLock {
    return KINDS.lock.make(this.context, name);
  }

  /**
   * The read/write lock called `name` (Redisson's `getReadWriteLock`): `readLock()` is shared,
   * `writeLock()` exclusive; both are stored in the hash `name`. Cheap: no Redis call.
   * @throws {InvalidArgumentError} for a bad name.
   * @throws {ClientClosedError} after `shutdown()`.
   * @example
   * ```ts
   * const rw = redisson.getReadWriteLock('config');
   * const config = await rw.readLock().using(() => loadConfig());       // many readers at once
   * await rw.writeLock().using(() => saveConfig({ ...config, v: 2 }));  // one writer, no readers
   * ```
   */
  getReadWriteLock(name: string): RReadWriteLock {
    // The pair's factory: the read-lock and write-lock entries share it.
    return KINDS['write-lock'].make(this.context, name);
  }

  /**
   * The spin lock called `name` (Redisson's `getSpinLock`): an RLock-compatible reentrant lock whose
   * waiters poll with `backOff` instead of subscribing. Cheap: no Redis call.
   * @param backOff pauses between attempts while the lock is busy.
   *   @default { type: 'exponential', initialDelay: 1, maxDelay: 128, multiplier: 2 }
   * @throws {InvalidArgumentError} for a bad name or back-off option.
   * @throws {ClientClosedError} after shutdown.
   * @example
   * ```ts
   * const lock = redisson.getSpinLock('import', { type: 'constant', delay: 100 });
   * await lock.using(() => runImport(), { waitTime: 30_000 });
   * ```
   */
  getSpinLock(name: string, backOff?: BackOffOptions): RSpinLock {
    return KINDS['spin-lock'].make(this.context, name, backOff);
  }

  /**
   * The fenced lock called `name` (Redisson's `getFencedLock`): an RLock whose every acquisition
   * draws a larger fencing token from `redisson_lock_token:{name}`. Cheap: no Redis call.
   * @throws {InvalidArgumentError} for a bad name.
   * @throws {ClientClosedError} after shutdown.
   * @example
   * ```ts
   * const handle = await redisson.getFencedLock('ledger').acquire({ waitTime: 5_000 });
   * try {
   *   await storage.write(entry, { fencingToken: handle.fencingToken }); // storage rejects older tokens
   * } finally {
   *   await handle.release();
   * }
   * ```
   */
  getFencedLock(name: string): RFencedLock {
    return KINDS['fenced-lock'].make(this.context, name);
  }

  /**
   * The non-reentrant lock called `name` (Redisson's `getNonReentrantLock`): an RLock whose holder
   * is refused with `LockReentryError` when it asks again. Cheap: no Redis call.
   * @throws {InvalidArgumentError} for a bad name.
   * @throws {ClientClosedError} after shutdown.
   * @example
   * ```ts
   * const lock = redisson.getNonReentrantLock('job');
   * await lock.using(async () => {
   *   await lock.lock(); // rejects with LockReentryError: the same owner asks again
   * });
   * ```
   */
  getNonReentrantLock(name: string): RNonReentrantLock {
    return KINDS['non-reentrant-lock'].make(this.context, name);
  }

  /**
   * The fair lock called `name` (Redisson's `getFairLock`): reentrant, granted in arrival order.
   * Cheap: no Redis call.
   * @throws {InvalidArgumentError} for a bad name.
   * @throws {ClientClosedError} after `shutdown()`.
   * @example
   * ```ts
   * const lock = redisson.getFairLock('printer');
   * await lock.using(() => print(doc), { waitTime: 60_000 }); // first come, first served
   * ```
   */
  getFairLock(name: string): RFairLock {
    return KINDS['fair-lock'].make(this.context, name);
  }

  /**
   * The non-reentrant fair lock called `name` (Redisson's `getNonReentrantFairLock`): granted in
   * arrival order; its holder's second acquire rejects with `LockReentryError`. Cheap: no Redis call.
   * @throws {InvalidArgumentError} for a bad name.
   * @throws {ClientClosedError} after `shutdown()`.
   * @example
   * ```ts
   * await redisson.getNonReentrantFairLock('queue-head').using(() => takeNext());
   * ```
   */
  getNonReentrantFairLock(name: string): RNonReentrantFairLock {
    return KINDS['non-reentrant-fair-lock'].make(this.context, name);
  }

  /**
   * The counting semaphore called `name` (Redisson's `getSemaphore`). Cheap: no Redis call.
   * @throws {InvalidArgumentError} for a bad name.
   * @throws {ClientClosedError} after `shutdown()`.
   * @example
   * ```ts
   * const api = redisson.getSemaphore('partner-api');
   * await api.trySetPermits(5);                      // sets the count only where none is set yet
   * const reply = await api.using(() => callPartner(), { waitTime: 10_000 });
   * ```
   */
  getSemaphore(name: string): RSemaphore {
    return KINDS.semaphore.make(this.context, name);
  }

  /**
   * The semaphore with permit ids and leases called `name` (Redisson's
   * `getPermitExpirableSemaphore`). Cheap: no Redis call.
   * @throws {InvalidArgumentError} for a bad name.
   * @throws {ClientClosedError} after `shutdown()`.
   * @example
   * ```ts
   * const slots = redisson.getPermitExpirableSemaphore('gpu-slots');
   * await slots.trySetPermits(2);
   * const permit = await slots.acquire({ leaseTime: 60_000 }); // given back by Redis after 60 s at the latest
   * try {
   *   await train(permit.permitId);
   * } finally {
   *   await permit.release();
   * }
   * ```
   */
  getPermitExpirableSemaphore(name: string): RPermitExpirableSemaphore {
    return KINDS['permit-expirable-semaphore'].make(this.context, name);
  }

  /**
   * The count-down latch called `name` (Redisson's `getCountDownLatch`). Cheap: no Redis call.
   * Avoid braces in latch names on Redis Cluster: Redisson's latch channel wraps the name in braces
   * of its own, which puts it in another slot than the count.
   * @throws {InvalidArgumentError} for a bad name.
   * @throws {ClientClosedError} after `shutdown()`.
   * @example
   * ```ts
   * const ready = redisson.getCountDownLatch('workers-ready');
   * await ready.trySetCount(3);
   * // in each of the three workers:
   * await ready.countDown();
   * // in the coordinator: resolves true once the count is 0, false when waitTime runs out
   * const allReady = await ready.await({ waitTime: 30_000 });
   * ```
   */
  getCountDownLatch(name: string): RCountDownLatch {
    return KINDS['count-down-latch'].make(this.context, name);
  }

  /**
   * All-or-nothing over `locks` (Redisson's `getMultiLock(RLock...)`): members may come from
   * different clients on different servers; nothing of its own is stored in Redis. Cheap: no Redis
   * call. Takes the locks as arguments or as one array.
   * @throws {InvalidArgumentError} when given no lock, something that is not a lock of a
   *   RedissonClient (a MultiLock or RedLock included), or the same lock twice.
   * @throws {ClientClosedError} when this client was shut down.
   * @example
   * ```ts
   * const transfer = redisson.getMultiLock(redisson.getLock('account:1'), redisson.getLock('account:2'));
   * await transfer.using(() => move(1, 2, 100)); // both held, or neither
   * ```
   */
  getMultiLock(...locks: BaseLock[] | [BaseLock[]]): RMultiLock;
  /**
   * All-or-nothing over `values` of one `group` (Redisson's `getMultiLock(group, values)`, a
   * `RedissonFasterMultiLock`): one hash named `group`, one script call to take or release every
   * value, one channel. Locks of overlapping values of a group exclude each other value by value,
   * Java's and Node's alike. See {@link MultiLockValue} for which JavaScript value stands for which
   * Java value. Cheap: no Redis call.
   * @throws {InvalidArgumentError} for a bad group name, no values, a value given twice, or a value
   *   that is not a string, an int32 integer or an int64 bigint.
   * @throws {ClientClosedError} when this client was shut down.
   * @example
   * ```ts
   * const seats = redisson.getMultiLock('show:42', ['A1', 'A2']);
   * await seats.using(() => book(42, ['A1', 'A2']), { waitTime: 5_000 }); // both seats, or neither
   * ```
   */
  getMultiLock(group: string, values: readonly MultiLockValue[]): RFasterMultiLock;
  getMultiLock(...args: BaseLock[] | [BaseLock[]] | [string, readonly MultiLockValue[]]): RMultiLock | RFasterMultiLock {
    if (typeof args[0] === 'string') {
      const [group, values] = args as [string, readonly MultiLockValue[]];
      return KINDS['faster-multi-lock'].make(this.context, group, values);
    }
    return KINDS['multi-lock'].make(this.context, ...(args as BaseLock[] | [BaseLock[]]));
  }

  /**
   * A majority lock over `locks` on independent servers (Redisson's deprecated `getRedLock`): held
   * with N/2 + 1 members taken within their validity. Cheap: no Redis call. See docs/multi-lock-and-red-lock.md for when
   * (not) to use it.
   * @throws {InvalidArgumentError} when given no lock, something that is not a lock of a
   *   RedissonClient, the same lock twice, or locks of different kinds.
   * @throws {ClientClosedError} when this client was shut down.
   * @example
   * ```ts
   * // `redisson`, `b` and `c`: clients of three independent Redis servers
   * const lock = redisson.getRedLock([redisson, b, c].map((client) => client.getLock('singleton-job')));
   * await lock.using(() => runJob(), { waitTime: 2_000 });
   * ```
   */
  getRedLock(...locks: BaseLock[] | [BaseLock[]]): RRedLock {
    return KINDS['red-lock'].make(this.context, ...locks);
  }

  /**
   * Runs `fn` in an owner scope: every lock taken by code awaited inside it belongs to one logical
   * thread and re-enters. Inside an open scope, runs in that scope. A `label` names what the scope
   * does for `lock.holders()` and the CLI (recorded when the client has `ownerInfo`).
   * @throws {InvalidArgumentError} when `fn` is not a function.
   * @throws {ClientClosedError} after `shutdown()`.
   * @example
   * ```ts
   * await redisson.run(async () => {
   *   await lock.lock();
   *   await lock.lock();  // the same scope: re-enters (hold count 2)
   *   await lock.unlock();
   *   await lock.unlock();
   * });
   * ```
   */
  run<T>(fn: () => T, options?: ScopeOptions): T {
    if (typeof fn !== 'function') throw new InvalidArgumentError('run() needs a function');
    this.assertOpen();
    if (options === undefined) return this.scopes.run(fn);
    const { label } = resolveScopeOptions(options);
    return this.scopes.run(fn, label);
  }

  /**
   * Subscribes to a client event; see {@link RedissonEvents}. Returns the client, for chaining.
   * @example
   * ```ts
   * redisson.on('holdLost', ({ kind, name, error }) => console.error(`lost ${kind} ${name}`, error));
   * ```
   */
  on<K extends keyof RedissonEvents>(type: K, handler: Handler<RedissonEvents[K]>): this {
    this.emitter.on(type, handler);
    return this;
  }

  /**
   * Unsubscribes a handler given to {@link on}. Returns the client, for chaining.
   * @example
   * ```ts
   * const onAcquired = ({ name, waitMs }: RedissonEvents['acquired']) => console.log(name, waitMs);
   * redisson.on('acquired', onAcquired);
   * redisson.off('acquired', onAcquired);
   * ```
   */
  off<K extends keyof RedissonEvents>(type: K, handler: Handler<RedissonEvents[K]>): this {
    this.emitter.off(type, handler);
    return this;
  }

  /**
   * What the client is holding on to right now.
   * @example
   * ```ts
   * afterEach(() => expect(redisson.diagnostics()).toEqual({ channels: 0, waiters: 0, leases: 0 }));
   * ```
   */
  diagnostics(): ClientDiagnostics {
    return { ...this.pubsub.stats, leases: this.leases.size };
  }

  /**
   * Stops the watchdog, closes the subscriber connection, waits for the unlock latches' deletions
   * already sent, and rejects pending waits with {@link ClientClosedError}. Locks still held are not released (they
   * expire with their lease); their handles' signals abort and `holdLost` is emitted for each. The
   * caller's `redis` connection is left open. Idempotent. Returns within {@link SHUTDOWN_BOUND_MS}
   * even when Redis does not answer (latches not deleted by then expire by themselves).
   * @example
   * ```ts
   * process.once('SIGTERM', async () => {
   *   await redisson.shutdown();
   *   redis.disconnect();
   * });
   * ```
   */
  async shutdown(): Promise<void> {
    if (this.lifetime.signal.aborted) return;
    const closed = new ClientClosedError();
    this.lifetime.abort(closed);
    for (const acquisition of [...this.pending]) acquisition.close(closed);
    this.leases.shutdown();
    const closing = Promise.all([this.pubsub.shutdown(), this.scripts.flush(), this.ownerRecord?.remove()]);
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, SHUTDOWN_BOUND_MS);
      timer.unref();
    });
    const answered = await Promise.race([closing.then(() => true), bound.then(() => false)]);
    clearTimeout(timer);
    if (!answered) this.options.logger.debug('shutdown: Redis did not answer in time; the unlock latches left expire by themselves');
    this.emitter.all.clear();
  }

  /** The hold ledger of `kind`, made on first use with a lease kind that renews through `kind`. */
  private ledgerOf(kind: HoldKind): HoldLedger {
    let ledger = this.ledgers.get(kind);
    if (!ledger) {
      const leaseKind: LeaseKind = { noun: 'Lock', renew: (batch, leaseTime) => kind.renew(this.scripts, batch, leaseTime) };
      ledger = new HoldLedger(this.leases, leaseKind);
      this.ledgers.set(kind, ledger);
    }
    return ledger;
  }

  /** The client's instance of a primitive's per-client state, made on first use. */
  private localOf<T>(local: ClientLocal<T>): T {
    let state = this.locals.get(local) as T | undefined;
    if (state === undefined) this.locals.set(local, (state = local.create(this.context)));
    return state;
  }

  private assertOpen(): void {
    this.lifetime.signal.throwIfAborted();
  }
}

/** How long past their wait acquisitions wait for a reply: `replyGrace`, extended by replica sync's own bound. */
function replyBoundOf(options: ResolvedOptions, scripts: ScriptRunner): ReplyBound {
  const { timeout, retries, retryDelay } = options.replicaSync;
  return {
    grace: options.replyGrace,
    syncing: () => scripts.syncing,
    syncGrace: (retries + 1) * (timeout + retryDelay),
  };
}

/** The main script's file name without its extension (`node worker.mjs`: `worker`), else `node`. */
function mainScriptName(): string {
  const script = process.argv[1];
  return script ? basename(script).replace(/\.[cm]?[jt]s$/, '') : 'node';
}

/** Whether `emitter` has a handler for `type` (mitt keeps a type's emptied list). */
function hasHandlers(emitter: Emitter<RedissonEvents>, type: keyof RedissonEvents | '*'): boolean {
  return (emitter.all.get(type)?.length ?? 0) > 0;
}
