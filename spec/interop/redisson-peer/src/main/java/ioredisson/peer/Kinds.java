package ioredisson.peer;

import java.util.Map;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/**
 * The request kinds. A new primitive is one entry here, e.g. a fair lock reuses the lock table:
 * {@code "fairLock", new Kind<>(r -> redisson.getFairLock(r.name()), LockOps.TABLE)}.
 */
final class Kinds {
  private Kinds() {}

  static Map<String, Kind<?>> of(RedissonClient redisson) {
    return Map.of(
        "peer", new Kind<>(r -> redisson, PeerOps.TABLE),
        "lock", new Kind<>(r -> redisson.getLock(r.name()), LockOps.TABLE),
        "counter", new Kind<>(r -> redisson.<String>getBucket(r.name(), StringCodec.INSTANCE), CounterOps.TABLE));
  }
}
