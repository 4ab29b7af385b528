import { InvalidArgumentError } from './errors';
import type { ScopeOptions } from './owner';

/**
 * Largest delay Node's timers accept (2^31-1 ms, about 24.8 days); every time option is capped by it,
 * and a larger one is refused with `InvalidArgumentError`.
 * @example
 * ```ts
 * const waitTime = Math.min(requestedWaitMs, MAX_TIME_MS);
 * ```
 * @category Options
 */
export const MAX_TIME_MS = 2 ** 31 - 1;

/**
 * Options of a {@link RedissonClient}. Every field is optional; see {@link DEFAULTS}. Unknown keys
 * and bad values are refused by the constructor with `InvalidArgumentError`.
 * @example
 * ```ts
 * const options: RedissonOptions = {
 *   lockWatchdogTimeout: 10_000,                  // leases of 10 s, renewed every ~3.3 s
 *   logger: console,                              // recovered errors, at debug level
 *   replicaSync: { timeout: 500, replicas: 1 },
 * };
 * const redisson = new RedissonClient(redis, options);
 * ```
 * @category Options
 */
export interface RedissonOptions {
  /**
   * Lease in ms given to locks acquired without `leaseTime`; the watchdog renews it every third of
   * this period while the lock is held.
   * @default 30000
   */
  lockWatchdogTimeout?: number;
  /**
   * Most leases renewed by one script call. A renewal round keeps up to 8 such calls in flight at
   * once (a Cluster's calls are also split by slot).
   * @default 100
   */
  lockWatchdogBatchSize?: number;
  /**
   * A fair-lock waiter's slack in ms when its call has no `waitTime` (`lock()`, `acquire()`): how
   * long after its turn could have come it keeps its place in the queue. A waiter whose process
   * died blocks the waiters behind it until then. Redisson's default; its docs say 5 s, its code 5 min.
   * @default 300000
   */
  fairLockWaitTimeout?: number;
  /**
   * How long in ms a fair-lock waiter's own channel stays subscribed after its wait, when its owner
   * was given (an owner scope, a `threadId`): a worker that queues again within it needs no
   * SUBSCRIBE, no UNSUBSCRIBE and one acquire attempt fewer. `0`: unsubscribe at once. Not in
   * Redisson, whose waiters unsubscribe at once.
   * @default 250
   */
  fairLockChannelLinger?: number;
  /**
   * Longest wait in ms for a SUBSCRIBE reply before a waiter falls back to TTL-bounded re-checks.
   * @default 7500
   */
  subscriptionTimeout?: number;
  /**
   * The bound of an acquire-like call with a `waitTime` during an outage: how long in ms past its
   * wait it waits for the reply of an attempt still in flight (Redis frozen, a reply lost, the
   * connection still connecting) before it gives up with `RedisUnavailableError` and takes back
   * whatever the attempt may do should it land later. So such a call settles within
   * `waitTime + replyGrace` (a lock write waiting for replicas, see `replicaSync`, may take its own
   * bound on top). Also `tryLock()` without `waitTime` is one attempt bounded by it. Not in Redisson.
   * @default 250
   */
  replyGrace?: number;
  /**
   * Sharded pub/sub (SPUBLISH/SSUBSCRIBE). `auto` follows Redisson: on for Redis Cluster when the
   * server supports it (Redis 7.0+, Valkey), off otherwise; a cluster without it (Redis 6.2) gets
   * PUBLISH/SUBSCRIBE, and the logger is told so once. `on` needs a server that has it.
   * @default 'auto'
   */
  shardedPubSub?: 'auto' | 'on' | 'off';
  /**
   * Told, at debug level, of every error the library recovers from by itself (a failed renewal
   * round, UNSUBSCRIBE or clean-up, a subscriber connection error), with what it was doing.
   * @default a logger that drops everything
   */
  logger?: Logger;
  /**
   * Replica sync, as Redisson's `checkLockSyncedSlaves`: after every script that changes lock state
   * (acquire, unlock, renewal, force-unlock), `WAIT` on the same node until its replicas have the
   * write, within `timeout`. A node with no connected replica gets no `WAIT` at all. See
   * {@link ReplicaSyncOptions}.
   * @default { enabled: true, timeout: 1000, replicas: 'connected', retries: 3, retryDelay: 200, aof: false }
   */
  replicaSync?: ReplicaSyncOptions;
  /**
   * Describes this client to whoever asks who holds a lock (`lock.holders()`, the CLI's `inspect`):
   * the service name and any extra fields; `host`, `pid`, `version` (this library's) and `startedAt`
   * are filled in unless given. The client then keeps a small key of its own,
   * `ioredisson:client:{<clientId>}`, outside Redisson's keys; see the guide "Who holds it".
   * @default undefined (nothing is recorded)
   */
  ownerInfo?: OwnerInfo;
  /**
   * Deadlock detection across clients: a lock waiter parked for `after` ms records what its owner
   * waits for (in the client's own key, as `ownerInfo` does: without it the record's service is the
   * main script's file name) and searches the locks' holders and their recorded waits for a cycle
   * back to itself; of each cycle the youngest wait rejects with `DeadlockError`. Only holds and waits
   * of one owner scope (`redisson.run`, `lock.using`) can form a cycle, and waits of Java clients and
   * of clients without detection are unknown. See the guide "Who holds it". Not in Redisson.
   * @default undefined (off: nothing is recorded or searched)
   */
  deadlockDetection?: DeadlockDetectionOptions;
}

/**
 * Settings of deadlock detection (option `deadlockDetection`).
 * @example
 * ```ts
 * const redisson = new RedissonClient(redis, { ownerInfo: { service: 'billing' }, deadlockDetection: { after: 1_000 } });
 * ```
 * @category Options
 */
export interface DeadlockDetectionOptions {
  /**
   * How long in ms a waiter stays parked before its wait is recorded and searched; shorter waits cost
   * nothing. A cycle is found within about `after` ms of its last wait beginning.
   * @default 1000
   */
  after?: number;
}

/**
 * How lock writes wait for replicas. A write counts as synced when at least one replica acknowledged
 * it within `timeout` (Redisson's rule). When none did, an acquisition is undone and retried, and any
 * other write (unlock, renewal) is re-sent as is (an unlock keeps its request id, so it counts once);
 * after `retries` such rounds the call rejects with `ReplicaSyncError` (`ERR_REPLICA_SYNC`).
 * @example
 * ```ts
 * // no WAIT at all, e.g. for a cache whose locks may be lost in a failover
 * const redisson = new RedissonClient(redis, { replicaSync: { enabled: false } });
 * ```
 * @category Options
 */
export interface ReplicaSyncOptions {
  /**
   * Whether to `WAIT` for replicas after lock writes. Costs nothing where a node has no replica.
   * @default true
   */
  enabled?: boolean;
  /**
   * Longest `WAIT` in ms (Redisson's `slavesSyncTimeout`). The connection carrying the write is
   * blocked meanwhile, so keep it short.
   * @default 1000
   */
  timeout?: number;
  /**
   * Replicas to wait for: a number, or `'connected'` for the node's `connected_slaves` (read with
   * `INFO replication`, cached per node and refreshed every 10 s and whenever fewer replicas answer).
   * @default 'connected'
   */
  replicas?: number | 'connected';
  /**
   * Rounds retried after a write no replica acknowledged, before the call fails.
   * @default 3
   */
  retries?: number;
  /**
   * Redisson's `ACK_AOF`: `WAITAOF 1 <replicas> <timeout>` instead of `WAIT`, so that a write counts
   * once the primary has fsynced it to its append-only file and, where it has replicas, at least one
   * of them has too. Sent after every lock write, on a node without replicas as well. Needs Redis 7.2+
   * or Valkey 8+ with `appendonly yes` on every primary and replica that takes lock writes; elsewhere
   * the write's call rejects with `AofSyncUnavailableError`. With `appendfsync everysec` a write waits
   * up to a second for the next fsync: give `timeout` more than that. Off when `enabled` is false.
   * @default false
   */
  aof?: boolean;
  /**
   * Pause in ms before each retried round.
   * @default 200
   */
  retryDelay?: number;
}

/**
 * Replica sync options with defaults filled in, as found in `redisson.options.replicaSync`.
 * @example
 * ```ts
 * const { enabled, timeout, retries } = redisson.options.replicaSync;
 * ```
 * @category Options
 */
export type ResolvedReplicaSync = Readonly<Required<ReplicaSyncOptions>>;

/**
 * A debug-level logger hook; `console` fits, as do pino, winston and `debug` adapters.
 * @example
 * ```ts
 * const logger: Logger = { debug: (message, details) => console.debug(`[ioredisson] ${message}`, details) };
 * const redisson = new RedissonClient(redis, { logger });
 * ```
 * @category Options
 */
export interface Logger {
  /** Told what failed (`message`) and its context, such as `error` and the lock's `name`; should not throw. */
  debug(message: string, details?: Record<string, unknown>): void;
}

/** The default logger: drops everything. */
const SILENT: Logger = Object.freeze({ debug: () => undefined });

/**
 * Resolved client options: every field of {@link RedissonOptions} with its default filled in, as
 * found in `redisson.options`.
 * @example
 * ```ts
 * console.log(`leases of ${redisson.options.lockWatchdogTimeout} ms`);
 * ```
 * @category Options
 */
export type ResolvedOptions = Readonly<
  Required<Omit<RedissonOptions, 'replicaSync' | 'ownerInfo' | 'deadlockDetection'>> & {
    /** Replica sync with every default filled in. */
    replicaSync: ResolvedReplicaSync;
    /** What the client records about itself; `undefined`: nothing. */
    ownerInfo: OwnerInfo | undefined;
    /** Deadlock detection with its default filled in; `undefined`: off. */
    deadlockDetection: Readonly<Required<DeadlockDetectionOptions>> | undefined;
  }
>;

/** Replica sync defaults: Redisson's timeout; shorter retries, as a stuck WAIT blocks the connection. */
export const REPLICA_SYNC_DEFAULTS: ResolvedReplicaSync = Object.freeze({
  enabled: true,
  timeout: 1_000,
  replicas: 'connected',
  retries: 3,
  retryDelay: 200,
  aof: false,
});

/**
 * The defaults, equal to Redisson's (frozen): what a {@link RedissonClient} uses for every option not
 * given.
 * @example
 * ```ts
 * const redisson = new RedissonClient(redis, { lockWatchdogTimeout: DEFAULTS.lockWatchdogTimeout * 2 });
 * ```
 * @category Options
 */
export const DEFAULTS: ResolvedOptions = Object.freeze({
  lockWatchdogTimeout: 30_000,
  lockWatchdogBatchSize: 100,
  fairLockWaitTimeout: 300_000,
  fairLockChannelLinger: 250,
  subscriptionTimeout: 7_500,
  replyGrace: 250,
  shardedPubSub: 'auto',
  logger: SILENT,
  replicaSync: REPLICA_SYNC_DEFAULTS,
  ownerInfo: undefined,
  deadlockDetection: undefined,
});

/**
 * What a client tells about itself (option `ownerInfo`): a service name and extra fields of your own.
 * @example
 * ```ts
 * const redisson = new RedissonClient(redis, { ownerInfo: { service: 'billing', region: 'eu-west-1' } });
 * ```
 * @category Options
 */
export interface OwnerInfo {
  /** The service's name, e.g. `'billing'`. */
  readonly service: string;
  /** Extra fields shown as given (`host`, `pid`, `version`, `startedAt` replace the filled-in values). */
  readonly [field: string]: string | number | boolean;
}

/**
 * Options of `lock()` and `acquire()`.
 * @example
 * ```ts
 * await lock.lock({ leaseTime: 10_000 }); // freed by Redis after 10 s at the latest; no watchdog
 * ```
 * @category Options
 */
export interface LockOptions {
  /**
   * Lease in ms after which Redis frees the lock by itself. Without it the lock gets
   * `lockWatchdogTimeout` and is renewed by the watchdog until released.
   * @default the watchdog's lease, renewed while held
   */
  leaseTime?: number;
  /**
   * Explicit owner thread id (a positive integer), for interop or hand-off; overrides the owner scope.
   * @default the current owner scope's id, or a fresh one
   */
  threadId?: number;
  /**
   * Aborts the wait; the call then rejects with `signal.reason`.
   * @default none: the wait ends only by acquiring, timing out or the client's shutdown
   */
  signal?: AbortSignal;
}

/**
 * Options of `tryLock()`, `tryAcquire()` and `using()`.
 * @example
 * ```ts
 * const got = await lock.tryLock({ waitTime: 1_000, leaseTime: 5_000, signal: AbortSignal.timeout(2_000) });
 * ```
 * @category Options
 */
export interface TryLockOptions extends LockOptions {
  /**
   * Longest time in ms to wait for the lock. `0` or absent in `tryLock`: a single attempt.
   * @default a single attempt in `tryLock()` and `tryAcquire()`; no limit in `acquire()` and `using()`
   */
  waitTime?: number;
}

/**
 * Options of `acquire()`: waits as long as it takes unless `waitTime` is given.
 * @example
 * ```ts
 * const handle = await lock.acquire({ waitTime: 5_000 }); // LockAcquireTimeoutError after 5 s
 * ```
 * @category Options
 */
export type AcquireOptions = TryLockOptions;

/**
 * Options of owner-sensitive queries and of `unlock()`.
 * @example
 * ```ts
 * const holds = await lock.getHoldCount({ threadId: 7 }); // owner `<clientId>:7`
 * ```
 * @category Options
 */
export interface OwnerOptions {
  /**
   * Explicit owner thread id (a positive integer).
   * @default the current owner scope's id, else this client's unscoped acquisition of the lock
   */
  threadId?: number;
}

const CLIENT_KEYS = Object.keys(DEFAULTS) as (keyof RedissonOptions)[];
const SHARDED_MODES = ['auto', 'on', 'off'] as const;

/** Validates client options and merges them over {@link DEFAULTS}. */
export function resolveOptions(options: RedissonOptions | undefined): ResolvedOptions {
  const given = checkOptionKeys(options, CLIENT_KEYS, 'RedissonClient options');
  const resolved = { ...DEFAULTS, ...stripUndefined(given) };
  checkTime('lockWatchdogTimeout', resolved.lockWatchdogTimeout, { min: 1 });
  checkInteger('lockWatchdogBatchSize', resolved.lockWatchdogBatchSize, 1, 10_000);
  checkTime('fairLockWaitTimeout', resolved.fairLockWaitTimeout, { min: 1 });
  checkTime('fairLockChannelLinger', resolved.fairLockChannelLinger, { min: 0 });
  checkTime('subscriptionTimeout', resolved.subscriptionTimeout, { min: 1 });
  checkTime('replyGrace', resolved.replyGrace, { min: 0 });
  if (typeof (resolved.logger as Partial<Logger> | null)?.debug !== 'function') {
    throw new InvalidArgumentError('logger must be an object with a debug(message, details) method');
  }
  if (!SHARDED_MODES.includes(resolved.shardedPubSub)) {
    throw new InvalidArgumentError(`shardedPubSub must be one of ${SHARDED_MODES.join(', ')}`);
  }
  if (resolved.ownerInfo !== undefined) checkOwnerInfo(resolved.ownerInfo);
  return Object.freeze({
    ...resolved,
    replicaSync: resolveReplicaSync(given.replicaSync),
    deadlockDetection: given.deadlockDetection === undefined ? undefined : resolveDeadlockDetection(given.deadlockDetection),
  });
}

const DEADLOCK_DETECTION_DEFAULTS: Required<DeadlockDetectionOptions> = { after: 1_000 };

function resolveDeadlockDetection(options: unknown): Readonly<Required<DeadlockDetectionOptions>> {
  const given = checkOptionKeys(options, Object.keys(DEADLOCK_DETECTION_DEFAULTS), 'deadlockDetection options');
  const resolved = { ...DEADLOCK_DETECTION_DEFAULTS, ...stripUndefined(given) };
  checkTime('deadlockDetection.after', resolved.after, { min: 1 });
  return Object.freeze(resolved);
}

function checkOwnerInfo(info: unknown): void {
  if (info === null || typeof info !== 'object' || Array.isArray(info)) {
    throw new InvalidArgumentError(`ownerInfo must be an object with a service name, got ${describe(info)}`);
  }
  const { service } = info as { service?: unknown };
  if (typeof service !== 'string' || service === '') {
    throw new InvalidArgumentError(`ownerInfo.service must be a non-empty string, got ${describe(service)}`);
  }
  for (const [key, value] of Object.entries(info)) {
    if (!['string', 'number', 'boolean'].includes(typeof value)) {
      throw new InvalidArgumentError(`ownerInfo.${key} must be a string, number or boolean, got ${describe(value)}`);
    }
  }
}

const REPLICA_SYNC_KEYS = Object.keys(REPLICA_SYNC_DEFAULTS);

function resolveReplicaSync(options: unknown): ResolvedReplicaSync {
  const given = checkOptionKeys(options, REPLICA_SYNC_KEYS, 'replicaSync options');
  const resolved = { ...REPLICA_SYNC_DEFAULTS, ...stripUndefined(given) } as ResolvedReplicaSync;
  for (const flag of ['enabled', 'aof'] as const) {
    if (typeof resolved[flag] !== 'boolean') {
      throw new InvalidArgumentError(`replicaSync.${flag} must be a boolean, got ${describe(resolved[flag])}`);
    }
  }
  checkTime('replicaSync.timeout', resolved.timeout, { min: 1 });
  if (resolved.replicas !== 'connected') checkInteger('replicaSync.replicas (or \'connected\')', resolved.replicas, 1, 1_000);
  checkInteger('replicaSync.retries', resolved.retries, 0, 100);
  checkTime('replicaSync.retryDelay', resolved.retryDelay, { min: 0 });
  return Object.freeze(resolved);
}

/** The normalised form of per-call lock options. */
export interface CallOptions {
  waitTime: number | undefined;
  leaseTime: number | undefined;
  threadId: number | undefined;
  signal: AbortSignal | undefined;
}

const CALL_KEYS = ['waitTime', 'leaseTime', 'threadId', 'signal'] as const;
const NO_CALL_OPTIONS: CallOptions = Object.freeze({
  waitTime: undefined,
  leaseTime: undefined,
  threadId: undefined,
  signal: undefined,
});

/** Validates the options of one lock call; `allowed` lists the keys this call accepts. */
export function resolveCallOptions(
  options: TryLockOptions | undefined,
  allowed: readonly (typeof CALL_KEYS)[number][] = CALL_KEYS,
): CallOptions {
  if (options === undefined) return NO_CALL_OPTIONS;
  const given = checkOptionKeys(options, allowed, 'lock options') as TryLockOptions;
  const { waitTime, leaseTime, threadId, signal } = given;
  if (waitTime !== undefined) checkTime('waitTime', waitTime, { min: 0 });
  if (leaseTime !== undefined) checkTime('leaseTime', leaseTime, { min: 1 });
  if (threadId !== undefined) checkThreadId(threadId);
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new InvalidArgumentError('signal must be an AbortSignal');
  }
  return { waitTime, leaseTime, threadId, signal };
}

/**
 * Longest object name accepted, in UTF-8 bytes; a longer one is refused with `InvalidArgumentError`.
 * @example
 * ```ts
 * if (Buffer.byteLength(name) > MAX_NAME_BYTES) name = `job:${hash(name)}`;
 * ```
 * @category Options
 */
export const MAX_NAME_BYTES = 65_536;

/**
 * Throws unless `name` is a usable object name: a non-empty, well-formed string (lone surrogates
 * would be mangled on the wire and make distinct names collide) of at most {@link MAX_NAME_BYTES}
 * bytes, whose braces, if any, form a hash tag. Redisson derives every auxiliary key by the "contains
 * `{`" rule, so stray braces would put them in other cluster slots than the lock itself.
 */
export function checkName(name: unknown, what = 'name'): asserts name is string {
  if (typeof name !== 'string' || name.length === 0) {
    throw new InvalidArgumentError(`${what} must be a non-empty string`);
  }
  if (!name.isWellFormed()) {
    throw new InvalidArgumentError(`${what} must be well-formed Unicode (it contains a lone surrogate)`);
  }
  // A UTF-16 code unit takes at most 3 bytes in UTF-8: a name this short needs no count.
  const bytes = name.length * 3 <= MAX_NAME_BYTES ? 0 : Buffer.byteLength(name);
  if (bytes > MAX_NAME_BYTES) {
    throw new InvalidArgumentError(`${what} is ${bytes} bytes long; the limit is ${MAX_NAME_BYTES}`);
  }
  // Without '{', derived names wrap the whole name in braces, which a '}' inside would cut short.
  if (name.includes('{') ? !hasHashTag(name) : name.includes('}')) {
    throw new InvalidArgumentError(
      `${what} ${JSON.stringify(name.slice(0, 100))} has braces that do not form a hash tag '{tag}'; derived keys would land in other cluster slots`,
    );
  }
}

/** Redis Cluster's rule: a non-empty run between the first `{` and the next `}`. */
function hasHashTag(name: string): boolean {
  const open = name.indexOf('{');
  const close = name.indexOf('}', open + 1);
  return close > open + 1;
}

/** Validates the options of `RedissonClient.run`. */
export function resolveScopeOptions(options: unknown): ScopeOptions {
  const { label } = checkOptionKeys(options, ['label'], 'run() options');
  if (label !== undefined && (typeof label !== 'string' || label === '')) {
    throw new InvalidArgumentError(`label must be a non-empty string, got ${describe(label)}`);
  }
  return label === undefined ? {} : { label };
}

/** Throws unless `threadId` is a positive safe integer. */
export function checkThreadId(threadId: unknown): asserts threadId is number {
  if (!Number.isSafeInteger(threadId) || (threadId as number) < 1) {
    throw new InvalidArgumentError(`threadId must be a positive safe integer, got ${describe(threadId)}`);
  }
}

function checkTime(what: string, value: unknown, { min }: { min: number }): void {
  checkInteger(what, value, min, MAX_TIME_MS, ' ms');
}

/** Throws unless `value` is an integer from `min` to `max`. */
export function checkInteger(what: string, value: unknown, min: number, max: number, unit = ''): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(
      `${what} must be an integer from ${min} to ${max}${unit}, got ${describe(value)}`,
    );
  }
}

/**
 * @internal Returns a copy of the options' own properties, after checking that each is allowed. Inherited
 * properties are not options: reading them would let a prototype change a call's meaning.
 */
export function checkOptionKeys(options: unknown, allowed: readonly string[], what: string): Record<string, unknown> {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new InvalidArgumentError(`${what} must be an object`);
  }
  const unknown = Reflect.ownKeys(options).filter((key) => typeof key !== 'string' || !allowed.includes(key));
  if (unknown.length > 0) {
    throw new InvalidArgumentError(
      `Unknown ${what}: ${unknown.map(String).join(', ')} (allowed: ${allowed.join(', ')})`,
    );
  }
  return { ...options };
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** A short rendering of a bad value for an error message; never throws. */
function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  try {
    return String(value);
  } catch {
    return `a value of type ${typeof value}`;
  }
}
