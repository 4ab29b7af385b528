package ioredisson.peer;

import static java.util.concurrent.TimeUnit.MILLISECONDS;

import java.util.Map;
import org.redisson.api.RLock;

/**
 * RLock operations, run on the request's thread. {@code leaseMs} -1 (the default) means no lease:
 * the watchdog renews the lock. Shared by every RLock-shaped kind (fair, read, write, fenced locks).
 */
final class LockOps {
  private LockOps() {}

  static final Map<String, Op<RLock>> TABLE = Map.ofEntries(
      Map.entry("lock", (lock, r) -> {
        lock.lock(r.longArg("leaseMs", -1), MILLISECONDS);
        return null;
      }),
      Map.entry("tryLock", (lock, r) -> lock.tryLock(r.longArg("waitMs", 0), r.longArg("leaseMs", -1), MILLISECONDS)),
      Map.entry("unlock", (lock, r) -> {
        lock.unlock();
        return null;
      }),
      Map.entry("forceUnlock", (lock, r) -> lock.forceUnlock()),
      Map.entry("isLocked", (lock, r) -> lock.isLocked()),
      Map.entry("getHoldCount", (lock, r) -> lock.getHoldCount()),
      Map.entry("isHeldByCurrentThread", (lock, r) -> lock.isHeldByCurrentThread()),
      Map.entry("isHeldByThread", (lock, r) -> lock.isHeldByThread(r.requiredLong("threadId"))),
      Map.entry("remainTimeToLive", (lock, r) -> lock.remainTimeToLive()));
}
