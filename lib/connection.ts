import type { Cluster, Redis } from 'ioredis';

/** A connection the user hands to the client: a standalone/Sentinel `Redis` or a `Cluster`. */
export type RedisConnection = Redis | Cluster;

/** True for an ioredis `Cluster`. */
export function isCluster(redis: RedisConnection): redis is Cluster {
  return (redis as { isCluster?: boolean }).isCluster === true;
}

/** The `keyPrefix` ioredis adds to keys (and, by hand, to channels), or `''`. */
export function keyPrefixOf(redis: RedisConnection): string {
  const options = isCluster(redis) ? redis.options.redisOptions : redis.options;
  return options?.keyPrefix ?? '';
}
