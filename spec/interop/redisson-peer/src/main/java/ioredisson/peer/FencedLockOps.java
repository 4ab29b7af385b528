package ioredisson.peer;

import static java.util.concurrent.TimeUnit.MILLISECONDS;

import java.util.HashMap;
import java.util.Map;
import org.redisson.api.RFencedLock;

/**
 * RFencedLock operations: every RLock operation of {@link LockOps}, plus the token-returning ones.
 * {@code tryLockAndGetToken} always passes a wait (Redisson's no-argument variant waits forever).
 */
final class FencedLockOps {
  private FencedLockOps() {}

  static final Map<String, Op<RFencedLock>> TABLE = table();

  private static Map<String, Op<RFencedLock>> table() {
    Map<String, Op<RFencedLock>> table = new HashMap<>();
    LockOps.TABLE.forEach((name, op) -> table.put(name, op::apply));
    table.put("lockAndGetToken", (lock, r) -> lock.lockAndGetToken());
    table.put("tryLockAndGetToken", (lock, r) ->
        lock.tryLockAndGetToken(r.longArg("waitMs", 0), r.longArg("leaseMs", -1), MILLISECONDS));
    table.put("getToken", (lock, r) -> lock.getToken());
    return Map.copyOf(table);
  }
}
