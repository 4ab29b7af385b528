import calculateSlot from 'cluster-key-slot';
import type { Cluster, Redis } from 'ioredis';
import { InvalidArgumentError } from '../../errors';
import type { RedisConnection } from '../../connection';
import { REPLICA_SYNC_DEFAULTS, type ResolvedOptions, type ResolvedReplicaSync } from '../../options';
import { Choice } from './choice';
import { ReplicaSync } from './replica-sync';

/** The command that lock, semaphore and latch scripts publish with: classic or sharded pub/sub. */
export type PublishCommandName = 'PUBLISH' | 'SPUBLISH';

/** True for an ioredis `Cluster`. */
export function isCluster(redis: RedisConnection): redis is Cluster {
  return (redis as { isCluster?: boolean }).isCluster === true;
}

/** Settings of a {@link Topology}. */
export interface TopologySettings {
  /** Whether to publish and subscribe sharded: see `RedissonOptions.shardedPubSub`. */
  shardedPubSub: ResolvedOptions['shardedPubSub'];
  /** Replica sync options. @default {@link REPLICA_SYNC_DEFAULTS} */
  replicaSync?: ResolvedReplicaSync;
  /** Told of what is recovered from (a failed probe or INFO, a node that refused WAIT). */
  onError?: (error: unknown, what: string) => void;
}

/**
 * What the client knows of the deployment behind its connection, and the one place that knows it:
 * whether it is a Cluster, the ioredis `keyPrefix`, the cluster slot of a key and the primary
 * serving it, sharded or classic pub/sub (and so the publish command), the subscriber connection's
 * shape, and the wait for replicas after writes.
 */
export class Topology {
  /** Whether the connection is an ioredis `Cluster`. */
  readonly cluster: boolean;
  /** The `keyPrefix` ioredis adds to keys (and, by hand, to channels), or `''`. */
  readonly prefix: string;
  /** Whether pub/sub is sharded (SPUBLISH/SSUBSCRIBE); may need a probe of the server first. */
  readonly sharded: Choice<boolean>;
  /** PUBLISH or SPUBLISH, passed to every script that publishes. */
  readonly publish: Choice<PublishCommandName>;
  /** Waits for replicas after lock writes. */
  readonly replicas: ReplicaSync;

  constructor(
    /** The user's connection. */
    readonly redis: RedisConnection,
    settings: TopologySettings,
  ) {
    const onError = settings.onError ?? (() => undefined);
    this.cluster = isCluster(redis);
    // A Cluster applies its top-level `keyPrefix`, which ioredis fills from `redisOptions` when unset.
    this.prefix = redis.options.keyPrefix ?? '';
    if (this.cluster && this.prefix !== '' && !hasHashTag(this.prefix)) {
      throw new InvalidArgumentError(
        `keyPrefix '${this.prefix}' on a Cluster needs a hash tag, such as '{${this.prefix.replace(/:$/, '')}}:': ` +
          "without one an object and its channel (Redisson's `...:{name}`) hash to different slots",
      );
    }
    const sharded = this.useShardedPubSub(settings.shardedPubSub, onError);
    this.sharded = new Choice(sharded);
    this.publish = new Choice(sharded.then((on): PublishCommandName => (on ? 'SPUBLISH' : 'PUBLISH')));
    this.replicas = new ReplicaSync((key) => this.nodeOf(key), settings.replicaSync ?? REPLICA_SYNC_DEFAULTS, onError);
  }

  /**
   * The group of `name` for calls that may carry several keys (renewal batches): its cluster slot,
   * as one script cannot span slots; `0` outside a cluster, where any grouping will do.
   */
  readonly slotOf = (name: string): number => (this.cluster ? calculateSlot(this.prefix + name) : 0);

  /**
   * Whether `a` and `b`, as named (the key prefix left out), hash to one cluster slot, so that one
   * script call may take both as keys.
   */
  sameSlot(a: string, b: string): boolean {
    return calculateSlot(a) === calculateSlot(b);
  }

  /** The database index of the connection (a Cluster's is 0): its keyspace notifications' `@<db>`. */
  get db(): number {
    const redis = this.redis;
    return isCluster(redis) ? 0 : (redis.options.db ?? 0);
  }

  /** The connection serving `key`'s slot (a cluster's primary for it), or the user's connection. */
  nodeOf(key: string): Redis | undefined {
    const redis = this.redis;
    if (!isCluster(redis)) return redis;
    const address = redis.slots[calculateSlot(this.prefix + key)]?.[0];
    if (!address) return undefined;
    return redis.nodes('master').find((node) => `${node.options.host}:${node.options.port}` === address);
  }

  /**
   * Publishes `message` on `channel` with the publish command (once it is known), outside a script:
   * for a channel that cannot be a key of the script that changed the state it announces.
   */
  publishMessage(channel: string, message: string): Promise<unknown> {
    return this.publish.with((command) => this.redis.call(command, channel, message));
  }

  /**
   * A new connection for subscribing, duplicated from the user's. A cluster routes SSUBSCRIBE to the
   * node owning each channel's slot only with `shardedSubscribers`. A standalone subscriber skips the
   * handshake's INFO and CLIENT SETINFO: ioredis 5 writes a SUBSCRIBE issued while connecting before
   * them, and then rejects its own ready check in subscriber mode and reconnects (ioredis#2037).
   * SUBSCRIBE works on a loading server anyway.
   */
  duplicateSubscriber(sharded: boolean): RedisConnection {
    return isCluster(this.redis)
      ? this.redis.duplicate(undefined, sharded ? { shardedSubscribers: true } : {})
      : this.redis.duplicate({ autoResubscribe: false, enableReadyCheck: false, disableClientInfo: true });
  }

  /**
   * Resolves whether to use sharded pub/sub: Redisson's rule is cluster mode on a server that has it.
   * A cluster without it (Redis 6.2) falls back to PUBLISH/SUBSCRIBE, and `onError` is told once.
   */
  private async useShardedPubSub(
    mode: TopologySettings['shardedPubSub'],
    onError: (error: unknown, what: string) => void,
  ): Promise<boolean> {
    if (mode !== 'auto') return mode === 'on';
    if (!this.cluster) return false;
    try {
      await this.redis.call('PUBSUB', 'SHARDNUMSUB');
      return true;
    } catch (error) {
      const why = isUnknownCommand(error)
        ? 'the server has no sharded pub/sub (Redis before 7.0)'
        : 'probing the server for it failed';
      onError(error, `shardedPubSub 'auto': ${why}; this client uses PUBLISH/SUBSCRIBE`);
      return false;
    }
  }
}

/** An error reply for a command or subcommand the server does not know. */
function isUnknownCommand(error: unknown): boolean {
  return error instanceof Error && /unknown (sub)?command/i.test(error.message);
}

/** Whether `key` has a Redis hash tag: a `{` followed later by a `}` with something between them. */
function hasHashTag(key: string): boolean {
  const open = key.indexOf('{');
  return open >= 0 && key.indexOf('}', open + 1) > open + 1;
}
