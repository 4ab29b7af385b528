package ioredisson.peer;

import java.util.Map;
import org.redisson.api.RedissonClient;

/** Operations on the peer itself. */
final class PeerOps {
  private PeerOps() {}

  static final Map<String, Op<RedissonClient>> TABLE = Map.of(
      "ping", (redisson, r) -> "pong",
      "clientId", (redisson, r) -> redisson.getId(),
      // The Java thread id behind a thread number: the <tid> of the owner field <clientId>:<tid>.
      "threadId", (redisson, r) -> Thread.currentThread().getId(),
      "sleep", (redisson, r) -> {
        Thread.sleep(r.requiredLong("ms"));
        return null;
      });
}
