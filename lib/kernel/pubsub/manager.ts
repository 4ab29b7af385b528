import { setMaxListeners } from 'node:events';
import type { RedisConnection } from '../../connection';
import { ClientClosedError } from '../../errors';
import { within } from '../guarded';
import { rejectingThrows } from '../rejecting';
import { isCluster, type Topology } from '../topology/topology';
import type { TimerQueue } from '../timer-queue';
import { NodeSubscribers } from './node-subscribers';
import { TtlRecheck } from './recheck';
import { WaitQueue, type Waiter } from './wait-queue';
import type { ChannelWaiters, WakePolicy, WakeStrategy } from './wake';

/**
 * Longest wait for ioredis' sharded subscribers to settle after a slot map refresh, and the pause
 * before another refresh, in ms.
 */
const FOLLOW_SETTLE_MS = 500;
/** Rounds of refresh (and re-SSUBSCRIBE) tried after a node dropped a shard channel. */
const FOLLOW_ROUNDS = 10;

/** Tries of a SUBSCRIBE its connection dropped (see {@link isDroppedByConnection}), and the pause between them, in ms. */
const SUBSCRIBE_TRIES = 5;
const SUBSCRIBE_RETRY_MS = 200;

/**
 * Whether a SUBSCRIBE failed with its connection rather than by the server's answer: the connection
 * closed, or ioredis' classic cluster subscriber, connecting to a node it picked (at start, after a
 * slot map change, after a node died), wrote the SUBSCRIBE before its ready check's INFO, which
 * ioredis or the server then refused in subscriber mode, failing the connection and the SUBSCRIBE
 * with it. ioredis picks another connection; a retry goes there.
 */
function isDroppedByConnection(error: unknown): boolean {
  return (
    error instanceof Error &&
    /Connection is closed|allowed in this context|Connection in subscriber mode/.test(error.message)
  );
}

/** Pause after the client's cluster connection lost a node before every channel is subscribed again, in ms. */
const NODE_LOST_SETTLE_MS = 1_000;

/** A cluster subscriber whose slot map (each slot's nodes, `host:port`, primary first) can be refreshed on demand. */
type FollowingSubscriber = RedisConnection & {
  readonly slots: string[][];
  refreshSlotsCache(callback?: (error?: Error | null) => void): void;
};

/** The channel of an SUNSUBSCRIBE a node sent unasked, as ioredis 5 reports it; else `undefined`. */
function droppedShardChannel(error: unknown): string | undefined {
  const match = /Last reply: sunsubscribe,(.*),\d+$/s.exec(error instanceof Error ? error.message : '');
  return match?.[1];
}

/**
 * A channel subscription as a waiter holding a share of it sees it. Shares are counted rather than
 * made into objects (thousands may wait): each share taken is given back once.
 */
export interface Subscription {
  /**
   * Parks `waiter` until a message, or the channel's TTL re-check, wakes it; returns `false`,
   * parking nothing, when a wake-up that found nobody parked was kept for it (go on at once).
   * `ttl`: what the waiter's refused attempt read, in ms (-1: no expiry), which the channel's
   * re-check goes by; absent: the waiter made no attempt (it waits its turn behind others). Throws
   * `ClientClosedError` once closed.
   */
  park(waiter: Waiter, ttl?: number): boolean;
  /** Takes a parked waiter out without waking it. */
  leave(waiter: Waiter): void;
  /**
   * Gives one share back, once per share taken; the channel is unsubscribed when the last share
   * goes. A waiter leaving without what it waited for (`acquired` false) passes a wake-up on to the
   * next one, so that a turn it may have been given is not lost.
   */
  release(acquired?: boolean): void;
}

/** How one share of a channel's subscription is given back. */
export interface ShareOptions {
  /**
   * How long the channel stays subscribed after its last share is given back, in ms, so that a
   * waiter expected back soon finds it ready (no SUBSCRIBE, no UNSUBSCRIBE). The latest share's
   * value counts. `0`: unsubscribe one turn of the event loop later.
   * @default 0
   */
  linger?: number;
}

/** A callback's hold on a {@link PubSubManager.listen}ed channel. */
export interface Listening {
  /**
   * Stops the callback at once; the channel is unsubscribed when its last callback goes (resolves
   * once the server answered that UNSUBSCRIBE). Idempotent.
   */
  stop(): Promise<void>;
}

/** An exact channel subscribed for callbacks rather than waiters: one per channel, shared by reference. */
interface ListenedChannel {
  readonly callbacks: Set<(message: string) => void>;
  readonly subscribed: Promise<unknown>;
}

/** Raised when the SUBSCRIBE reply does not come within `subscriptionTimeout`. */
export class SubscribeTimeoutError extends Error {
  constructor(channel: string, ms: number) {
    super(`No reply to SUBSCRIBE ${channel} within ${ms} ms`);
  }
}

/** Settings of a {@link PubSubManager}. */
export interface PubSubSettings {
  /** Longest wait for a SUBSCRIBE reply, in ms. */
  subscriptionTimeout: number;
  /** Called after the subscriber reconnected, re-subscribed and woke every waiter. */
  onReconnect(channels: number): void;
  /** Keeps the SUBSCRIBE time limits and runs the channels' TTL re-checks (see {@link TtlRecheck}). */
  readonly timers: TimerQueue;
  /** Told of an error recovered from (a failed UNSUBSCRIBE or re-SUBSCRIBE, a connection error). */
  onError(error: unknown, what: string): void;
}

/**
 * One subscribed channel: its shares, its wait queue and the strategy its messages wake by. It is
 * also the {@link Subscription} of every waiter holding a share.
 */
class ChannelEntry implements ChannelWaiters, Subscription {
  refs = 0;
  readonly queue = new WaitQueue();
  readonly strategy: WakeStrategy;
  readonly recheck: TtlRecheck;
  /**
   * The SUBSCRIBE's reply while it is awaited (or once it failed); `undefined` once it came (see
   * {@link confirmed}).
   */
  subscribed: Promise<unknown> | undefined;
  /** How long the channel stays subscribed once its last share is given back, in ms (the latest share's say). */
  linger = 0;
  /** The pending drop of a channel nobody shares, while it lingers. */
  dropTimer: NodeJS.Timeout | undefined;
  /**
   * `subscribed`, or rejected by the client's shutdown (`abandon`) first: made once for all the
   * waiters awaiting the SUBSCRIBE. The shutdown goes through the entries anyway, so no abort
   * listener is added (adding one to an `AbortSignal` costs more than the rest of a SUBSCRIBE's
   * bookkeeping).
   */
  subscribedWhileOpen: Promise<unknown> | undefined;
  /** Rejects {@link subscribedWhileOpen}, once made. */
  abandon: ((error: Error) => void) | undefined;

  constructor(
    readonly name: string,
    policy: WakePolicy,
    subscribed: Promise<unknown>,
    private readonly giveBack: (entry: ChannelEntry) => void,
    timers: TimerQueue,
  ) {
    this.subscribed = subscribed;
    this.strategy = policy(this);
    this.recheck = new TtlRecheck(this.queue, timers);
  }

  /** Whether the SUBSCRIBE reply has come: later shares need not wait for it. */
  get confirmed(): boolean {
    return this.subscribed === undefined;
  }

  /** The SUBSCRIBE reply came: what awaiting it took is let go (a channel may be subscribed for long). */
  confirm(): void {
    this.subscribed = undefined;
    this.subscribedWhileOpen = undefined;
    this.abandon = undefined;
  }

  get shares(): number {
    return this.refs;
  }

  get parked(): number {
    return this.queue.size;
  }

  wake(count: number): void {
    // A wake-up is kept only for a share not parked now (its attempt may have missed this message):
    // one kept for nobody would send the next waiter to park on a re-check for nothing. A lingering
    // channel, which nobody shares, so wakes no one and keeps nothing.
    this.queue.wake(count, this.refs - this.queue.size);
  }

  shift(): Waiter | undefined {
    return this.queue.shift();
  }

  offer(gift: unknown): boolean {
    return this.queue.offer(gift);
  }

  park(waiter: Waiter, ttl?: number): boolean {
    if (ttl !== undefined) this.recheck.read(ttl);
    return this.queue.park(waiter);
  }

  leave(waiter: Waiter): void {
    this.queue.leave(waiter);
  }

  release(acquired = true): void {
    if (!acquired) this.queue.wake(1, 0);
    this.giveBack(this);
  }
}

/**
 * Owns the client's one subscriber connection. Channels are shared by reference count among local
 * waiters, each with a FIFO wait queue that messages wake according to the channel's policy.
 */
export class PubSubManager {
  private subscriber: RedisConnection | undefined;
  private readonly entries = new Map<string, ChannelEntry>();
  /** Channels subscribed for {@link listen} callbacks, by their exact name. */
  private readonly listened = new Map<string, ListenedChannel>();
  /** On a Cluster, the connections to every primary that carry the {@link listen}ed channels. */
  private nodes: NodeSubscribers | undefined;
  private readonly prefix: string;
  private readonly lifetime = new AbortController();
  private readonly leaveChannel = (entry: ChannelEntry): void => this.leave(entry.name, entry);
  /** TCP connections the subscriber has made; any after the first means its subscriptions were lost. */
  private connections = 0;
  /**
   * Sharded channels a cluster node dropped (their slot moved away), to subscribe again, each with
   * the `host:port` of the node that dropped it.
   */
  private readonly dropped = new Map<string, string>();
  private following = false;

  constructor(
    /** The deployment: whether to SSUBSCRIBE, the key prefix, the connection to duplicate. */
    private readonly topology: Topology,
    private readonly settings: PubSubSettings,
  ) {
    // ioredis prefixes the channels passed to scripts as KEYS but not SUBSCRIBE arguments.
    this.prefix = topology.prefix;
    setMaxListeners(0, this.lifetime.signal);
  }

  /** Number of channels in use by local waiters, and of callers parked on them. */
  get stats(): { channels: number; waiters: number } {
    let channels = 0;
    let waiters = 0;
    for (const entry of this.entries.values()) {
      if (entry.refs > 0) channels += 1;
      waiters += entry.queue.callers;
    }
    return { channels, waiters };
  }

  /** Whether local waiters share `channel` right now. */
  hasWaiters(channel: string): boolean {
    // Without any subscription the channel is not looked up (a fresh name would be hashed for nothing).
    return this.entries.size > 0 && (this.entries.get(this.prefix + channel)?.refs ?? 0) > 0;
  }

  /**
   * Takes a share of `channel`'s subscription and waits for the SUBSCRIBE reply, unless an earlier
   * share already saw it. Rejects with
   * {@link SubscribeTimeoutError} or the subscribe error (the caller falls back to re-checks), with
   * `signal.reason`, or with {@link ClientClosedError}; in every case the share is given back.
   */
  subscribe(
    channel: string,
    policy: WakePolicy,
    timeoutMs: number,
    signal?: AbortSignal,
    options?: ShareOptions,
  ): Promise<Subscription> {
    // Not an async function (nor are those it calls): every waiter that parks on a channel nobody
    // shares comes here, and each async step costs promises the wait does not need.
    if (this.lifetime.signal.aborted) return Promise.reject(this.lifetime.signal.reason);
    const name = this.prefix + channel;
    let entry = this.entries.get(name);
    if (!entry) {
      const subscribed = this.subscribeRetrying([name], () => this.entries.get(name) === created && created.refs > 0);
      const created: ChannelEntry = new ChannelEntry(name, policy, subscribed, this.leaveChannel, this.settings.timers);
      subscribed.then(
        () => created.confirm(),
        () => this.forget(name, created),
      );
      this.entries.set(name, created);
      this.holdProcess();
      entry = created;
    }
    const subscription = this.share(entry, options);
    const { subscribed } = entry;
    if (!subscribed) return Promise.resolve(subscription);
    const limit = Math.min(timeoutMs, this.settings.subscriptionTimeout);
    const whileOpen = this.subscribedWhileOpen(entry, subscribed);
    return within(this.settings.timers, whileOpen, limit, () => new SubscribeTimeoutError(name, limit), signal).then(
      () => subscription,
      (error: unknown) => {
        subscription.release();
        throw error;
      },
    );
  }

  /** See {@link ChannelEntry.subscribedWhileOpen}; its rejection is handled by the waiters that await it. */
  private subscribedWhileOpen(entry: ChannelEntry, subscribed: Promise<unknown>): Promise<unknown> {
    if (!entry.subscribedWhileOpen) {
      entry.subscribedWhileOpen = new Promise((resolve, reject) => {
        entry.abandon = reject;
        subscribed.then(resolve, reject);
      });
      entry.subscribedWhileOpen.catch(() => undefined);
    }
    return entry.subscribedWhileOpen;
  }

  /**
   * A share of `channel`'s subscription at once, when its SUBSCRIBE was confirmed already (a local
   * waiter shares it, or it lingers): every message from now on reaches the share, so an attempt
   * sent after this call cannot miss a release. `undefined` otherwise (use {@link subscribe}).
   */
  shareConfirmed(channel: string, options?: ShareOptions): Subscription | undefined {
    if (this.lifetime.signal.aborted || this.entries.size === 0) return undefined;
    const entry = this.entries.get(this.prefix + channel);
    return entry?.confirmed ? this.share(entry, options) : undefined;
  }

  /** Takes a share of `entry`, which is its holder's subscription. */
  private share(entry: ChannelEntry, options: ShareOptions | undefined): Subscription {
    entry.refs += 1;
    entry.linger = options?.linger ?? 0;
    clearTimeout(entry.dropTimer);
    entry.dropTimer = undefined;
    return entry;
  }

  /**
   * The wake strategy of `channel` once its SUBSCRIBE was confirmed (so that every message from now
   * on reaches it); `undefined` before, or when no local waiter shares the channel.
   */
  strategyOf(channel: string): WakeStrategy | undefined {
    const entry = this.entries.get(this.prefix + channel);
    return entry?.confirmed ? entry.strategy : undefined;
  }

  /**
   * Rejects every waiter with {@link ClientClosedError} and closes the subscriber connection;
   * resolves once its socket is gone.
   */
  async shutdown(): Promise<void> {
    const error = new ClientClosedError();
    this.lifetime.abort(error);
    for (const entry of this.entries.values()) {
      clearTimeout(entry.dropTimer);
      entry.recheck.stop();
      entry.abandon?.(error);
      entry.queue.close(error);
    }
    this.entries.clear();
    this.listened.clear();
    const nodesClosed = this.nodes?.close();
    this.nodes = undefined;
    const subscriber = this.subscriber;
    this.subscriber = undefined;
    if (!subscriber) return void (await nodesClosed);
    // Only a connection with a socket ends with an 'end' event; one waiting to reconnect just stops.
    const hasSocket = ['connecting', 'connect', 'ready'].includes(subscriber.status);
    const ended = hasSocket ? new Promise((resolve) => subscriber.once('end', resolve)) : undefined;
    subscriber.disconnect();
    await Promise.all([ended, nodesClosed]);
  }

  /**
   * Gives a share back. The last share unsubscribes one turn of the event loop later (or after its
   * linger): off the path of the acquisition that just completed, and not at all if a new waiter
   * joins meanwhile.
   */
  private leave(name: string, entry: ChannelEntry): void {
    entry.refs -= 1;
    if (entry.refs > 0) return;
    // What was kept for waits now over would wake the next one for nothing.
    entry.queue.clearPermits();
    entry.recheck.stop();
    // An UNSUBSCRIBE sent before its SUBSCRIBE completed can be lost (a cluster's sharded subscriber
    // connects to each node when first needed), leaving the channel subscribed: wait for it first.
    const { subscribed } = entry;
    if (!subscribed) return this.scheduleDrop(name, entry);
    subscribed.then(
      () => this.scheduleDrop(name, entry),
      () => undefined,
    );
  }

  /** Unsubscribes `entry` after its linger; not once closed (shutdown ends its waiters after clearing the drops). */
  private scheduleDrop(name: string, entry: ChannelEntry): void {
    if (entry.refs > 0 || this.lifetime.signal.aborted) return;
    if (entry.linger <= 0) {
      setImmediate(() => this.dropIfUnused(name, entry));
      return;
    }
    clearTimeout(entry.dropTimer);
    entry.dropTimer = setTimeout(() => this.dropIfUnused(name, entry), entry.linger);
    entry.dropTimer.unref();
  }

  /** Unsubscribes `entry` unless a share was taken again meanwhile. */
  private dropIfUnused(name: string, entry: ChannelEntry): void {
    entry.dropTimer = undefined;
    if (entry.refs > 0 || this.entries.get(name) !== entry || this.lifetime.signal.aborted) return;
    this.entries.delete(name);
    this.holdProcess();
    this.send('unsubscribe', [name]).catch((error: unknown) => this.settings.onError(error, `UNSUBSCRIBE ${name}`));
  }

  /** Drops an entry whose SUBSCRIBE failed, so the next waiter subscribes afresh. */
  private forget(name: string, entry: ChannelEntry): void {
    if (this.entries.get(name) === entry) this.entries.delete(name);
    this.holdProcess();
  }

  private onMessage(channel: string, message: string): void {
    const listened = this.listened.get(channel);
    if (listened) for (const callback of [...listened.callbacks]) callback(message);
    const entry = this.entries.get(channel);
    entry?.strategy.deliver(message, entry);
  }

  /** After a reconnect: subscribe every channel again, then wake everyone (messages in the gap are lost). */
  private async onReconnect(): Promise<void> {
    const names = [...this.entries.keys()];
    if (names.length > 0) {
      await this.subscribeRetrying(names, () => true).catch((error: unknown) =>
        this.settings.onError(error, 're-SUBSCRIBE'),
      );
    }
    const listened = [...this.listened.keys()];
    // On a Cluster they are on connections of their own, which subscribe again by themselves.
    if (listened.length > 0 && !this.topology.cluster) {
      await this.sendClassic('subscribe', listened).catch((error: unknown) =>
        this.settings.onError(error, 're-SUBSCRIBE'),
      );
    }
    for (const entry of this.entries.values()) {
      entry.strategy.reset?.();
      entry.queue.wake(Infinity, entry.refs - entry.queue.size);
    }
    this.settings.onReconnect(names.length);
  }

  /** SUBSCRIBEs `names`, again while their connection dropped them and `wanted()` (a share still waits). */
  private subscribeRetrying(names: string[], wanted: () => boolean, tries = 1): Promise<unknown> {
    return this.send('subscribe', names).catch(async (error: unknown) => {
      if (tries >= SUBSCRIBE_TRIES || !isDroppedByConnection(error) || this.lifetime.signal.aborted) throw error;
      this.settings.onError(error, `SUBSCRIBE ${names.join(' ')}, tried again (${tries + 1} of ${SUBSCRIBE_TRIES})`);
      await new Promise((resolve) => setTimeout(resolve, SUBSCRIBE_RETRY_MS).unref());
      if (!wanted()) throw error;
      return this.subscribeRetrying(names, wanted, tries + 1);
    });
  }

  /** (UN)SUBSCRIBEs `names` on the subscriber: at once when whether pub/sub is sharded is known, else once it is. */
  private send(verb: 'subscribe' | 'unsubscribe', names: string[]): Promise<unknown> {
    return rejectingThrows(() => this.topology.sharded.with((sharded) => this.sendAs(sharded, verb, names)));
  }

  private sendAs(sharded: boolean, verb: 'subscribe' | 'unsubscribe', names: string[]): Promise<unknown> {
    const subscriber = this.connect(sharded);
    if (!sharded) return verb === 'subscribe' ? subscriber.subscribe(...names) : subscriber.unsubscribe(...names);
    // ioredis puts the key prefix on SSUBSCRIBE and SUNSUBSCRIBE arguments itself (shard channels are
    // keys to it), as it does not on SUBSCRIBE's: they go without the one added here.
    const { prefix } = this;
    const given = prefix ? names.map((name) => name.slice(prefix.length)) : names;
    return verb === 'subscribe' ? subscriber.ssubscribe(...given) : subscriber.sunsubscribe(...given);
  }

  /**
   * Calls `onMessage` with every message on `channel` (exact, no key prefix, classic SUBSCRIBE) from
   * the SUBSCRIBE reply on, until {@link Listening.stop}: for keyspace notifications. Channels are
   * shared by reference among callbacks. On a Cluster the channel is subscribed on every primary
   * (each publishes its own keys' notifications), over connections of its own. Callbacks alone never
   * keep the process alive: the subscriber's socket is unreferenced while no waiter shares a
   * channel. Rejects with the SUBSCRIBE's error or {@link ClientClosedError}.
   */
  async listen(channel: string, onMessage: (message: string) => void): Promise<Listening> {
    this.lifetime.signal.throwIfAborted();
    let entry = this.listened.get(channel);
    if (!entry) {
      const created: ListenedChannel = { callbacks: new Set(), subscribed: this.sendListened('subscribe', channel) };
      created.subscribed.catch(() => {
        if (this.listened.get(channel) === created) this.listened.delete(channel);
      });
      this.listened.set(channel, created);
      entry = created;
    }
    const callback = (message: string): void => onMessage(message);
    entry.callbacks.add(callback);
    this.holdProcess();
    await within(
      this.settings.timers,
      entry.subscribed,
      this.settings.subscriptionTimeout,
      () => new SubscribeTimeoutError(channel, this.settings.subscriptionTimeout),
      this.lifetime.signal,
    ).catch((error: unknown) => {
      void this.unlisten(channel, entry, callback);
      throw error;
    });
    let stopped: Promise<void> | undefined;
    return { stop: () => (stopped ??= this.unlisten(channel, entry, callback)) };
  }

  private async unlisten(channel: string, entry: ListenedChannel, callback: (message: string) => void): Promise<void> {
    entry.callbacks.delete(callback);
    if (entry.callbacks.size > 0 || this.listened.get(channel) !== entry) return;
    this.listened.delete(channel);
    this.holdProcess();
    if (this.lifetime.signal.aborted) return;
    await entry.subscribed.catch(() => undefined);
    // A callback that came back meanwhile made a new entry, whose SUBSCRIBE follows this UNSUBSCRIBE.
    await this.sendListened('unsubscribe', channel).catch((error: unknown) =>
      this.settings.onError(error, `UNSUBSCRIBE ${channel}`),
    );
  }

  /** (UN)SUBSCRIBEs a {@link listen}ed channel: on the subscriber, or on a Cluster on every primary. */
  private sendListened(verb: 'subscribe' | 'unsubscribe', channel: string): Promise<unknown> {
    const redis = this.topology.redis;
    if (!isCluster(redis)) return this.sendClassic(verb, [channel]);
    this.nodes ??= new NodeSubscribers(redis, {
      onMessage: (name, message) => this.onMessage(name, message),
      onError: (error, what) => this.settings.onError(error, what),
    });
    return verb === 'subscribe' ? this.nodes.subscribe(channel) : this.nodes.unsubscribe(channel);
  }

  /** SUBSCRIBEs or UNSUBSCRIBEs `names` on the subscriber, whether or not pub/sub is sharded. */
  private async sendClassic(verb: 'subscribe' | 'unsubscribe', names: string[]): Promise<unknown> {
    const subscriber = this.connect(await this.topology.sharded.ready);
    return verb === 'subscribe' ? subscriber.subscribe(...names) : subscriber.unsubscribe(...names);
  }

  /**
   * References the subscriber's socket (so that it keeps the process alive) while waiters share a
   * channel or no callback listens, and unreferences it while only {@link listen} callbacks use it.
   */
  private holdProcess(): void {
    const stream = (this.subscriber as { stream?: { ref?(): void; unref?(): void } } | undefined)?.stream;
    if (this.entries.size > 0 || this.listened.size === 0) stream?.ref?.();
    else stream?.unref?.();
  }

  private connect(sharded: boolean): RedisConnection {
    if (this.subscriber) return this.subscriber;
    const subscriber = this.topology.duplicateSubscriber(sharded);
    subscriber.on('message', (channel: string, message: string) => this.onMessage(channel, message));
    subscriber.on('smessage', (channel: string, message: string) => this.onMessage(channel, message));
    subscriber.on('connect', () => {
      this.connections += 1;
      this.holdProcess();
    });
    // A connection that never became ready may still have carried SUBSCRIBEs: count connections,
    // not ready events, to tell a reconnect.
    subscriber.on('ready', () => {
      if (this.connections > 1) void this.onReconnect();
    });
    // Connection errors are retried by ioredis; waiters are covered by their TTL-bounded waits.
    subscriber.on('error', (error: unknown) => this.settings.onError(error, 'subscriber connection'));
    const redis = this.topology.redis;
    if (isCluster(redis) && !sharded) {
      // ioredis' classic cluster subscriber moves to another node when its own goes and re-subscribes
      // what it knew of; after a primary was killed, one channel was seen missing (its waiters left
      // to their lease-long re-checks). When the client's connection loses a node, subscribe every
      // channel again (a no-op where it still is) and wake the waiters to re-check.
      let pending: NodeJS.Timeout | undefined;
      const onNodeLost = (): void => {
        pending ??= setTimeout(() => {
          pending = undefined;
          if (!this.lifetime.signal.aborted) void this.onReconnect();
        }, NODE_LOST_SETTLE_MS).unref();
      };
      redis.on('-node', onNodeLost);
      this.lifetime.signal.addEventListener('abort', () => {
        redis.off('-node', onNodeLost);
        clearTimeout(pending);
      });
    }
    if (isCluster(subscriber) && sharded) {
      // A node that stops serving a slot (resharding, CLUSTER FAILOVER) ends its shard channels with
      // an SUNSUBSCRIBE nobody asked for; ioredis 5 reports it only as a node error and neither
      // refreshes its slot map nor subscribes again, so the waiters would hear nothing more.
      subscriber.on('nodeError', (error: unknown, node: string) => {
        const channel = droppedShardChannel(error);
        if (channel === undefined) return this.settings.onError(error, 'sharded subscriber node');
        if (this.entries.has(channel)) this.follow(subscriber, channel, node);
      });
    }
    this.subscriber = subscriber;
    return subscriber;
  }

  /**
   * Follows a shard channel that `from` dropped to its slot's new primary: refreshes the subscriber's
   * slot map (ioredis then subscribes its known channels on the nodes now serving them), subscribes
   * the dropped channels again for good measure, and wakes their waiters to re-check (a release in
   * the gap was not heard).
   */
  private follow(subscriber: FollowingSubscriber, channel: string, from: string, round = 1): void {
    this.dropped.set(channel, from);
    if (this.following) return;
    this.following = true;
    this.refreshFor(subscriber, round);
  }

  /**
   * One round of {@link follow}. The node that answers the refresh may not know of the change yet:
   * its map still gives a dropped channel's slot to the node that dropped it. Subscribed there, the
   * channel would miss what the new primary publishes (a demoted primary, now a replica, hears its
   * shard's messages only once the new primary lists it, a gossip round later): refresh again
   * until the map has moved on.
   */
  private refreshFor(subscriber: FollowingSubscriber, round: number): void {
    subscriber.refreshSlotsCache((error) => {
      if (error) this.settings.onError(error, 'refreshing the subscriber slot map');
      if (round < FOLLOW_ROUNDS && !this.lifetime.signal.aborted && this.mapsToDropper(subscriber)) {
        setTimeout(() => this.refreshFor(subscriber, round + 1), FOLLOW_SETTLE_MS).unref();
        return;
      }
      // The refresh resets ioredis' sharded subscribers, which say `subscribersReady` when done (never
      // before this callback returns); give that a moment.
      const done = (): void => {
        clearTimeout(timer);
        subscriber.off('subscribersReady', done);
        void this.resubscribeDropped(subscriber, round);
      };
      const timer = setTimeout(done, FOLLOW_SETTLE_MS);
      timer.unref();
      subscriber.on('subscribersReady', done);
    });
  }

  /** Whether the subscriber's slot map still gives a dropped channel in use to the node that dropped it. */
  private mapsToDropper(subscriber: FollowingSubscriber): boolean {
    for (const [name, from] of this.dropped) {
      const slot = this.topology.slotOf(name.slice(this.prefix.length));
      if (this.entries.has(name) && subscriber.slots[slot]?.[0] === from) return true;
    }
    return false;
  }

  /** The end of {@link follow}: SSUBSCRIBEs the dropped channels and wakes their waiters. */
  private async resubscribeDropped(subscriber: FollowingSubscriber, round: number): Promise<void> {
    this.following = false;
    const dropped = [...this.dropped].filter(([name]) => this.entries.has(name));
    this.dropped.clear();
    if (dropped.length === 0 || this.lifetime.signal.aborted) return;
    const names = dropped.map(([name]) => name);
    try {
      await this.send('subscribe', names);
    } catch (error) {
      // Most likely a slot map still out of date (MOVED): refresh and try again, a few times.
      this.settings.onError(error, `re-SSUBSCRIBE after a slot move (round ${round})`);
      if (round < FOLLOW_ROUNDS) {
        const again = (): void => dropped.forEach(([name, from]) => this.follow(subscriber, name, from, round + 1));
        setTimeout(again, FOLLOW_SETTLE_MS).unref();
      }
    }
    for (const name of names) {
      const entry = this.entries.get(name);
      if (!entry) continue;
      entry.strategy.reset?.();
      entry.queue.wake(Infinity, entry.refs - entry.queue.size);
    }
    this.settings.onReconnect(names.length);
  }
}
