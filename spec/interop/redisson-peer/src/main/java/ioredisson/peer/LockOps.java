package ioredisson.peer;

import static java.util.concurrent.TimeUnit.MILLISECONDS;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.redisson.api.DeletedObjectListener;
import org.redisson.api.ExpiredObjectListener;
import org.redisson.api.RLock;

/**
 * RLock operations, run on the request's thread. {@code leaseMs} -1 (the default) means no lease:
 * the watchdog renews the lock. Shared by every RLock-shaped kind (fair, read, write, fenced locks).
 */
final class LockOps {
  private LockOps() {}

  /** What the listeners added by {@code addListener} heard, as {@code expired:<name>} or {@code deleted:<name>}. */
  private static final List<String> HEARD = new ArrayList<>();

  private static void hear(String what) {
    synchronized (HEARD) {
      HEARD.add(what);
    }
  }

  /** {@code event} "expired" or "deleted": an ExpiredObjectListener or a DeletedObjectListener. */
  private static int addListener(RLock lock, String event) {
    return switch (event) {
      case "expired" -> lock.addListener((ExpiredObjectListener) name -> hear("expired:" + name));
      case "deleted" -> lock.addListener((DeletedObjectListener) name -> hear("deleted:" + name));
      default -> throw new IllegalArgumentException("event must be expired or deleted, got " + event);
    };
  }

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
      Map.entry("remainTimeToLive", (lock, r) -> lock.remainTimeToLive()),
      Map.entry("addListener", (lock, r) -> addListener(lock, r.text("event"))),
      Map.entry("removeListener", (lock, r) -> {
        lock.removeListener((int) r.requiredLong("listenerId"));
        return null;
      }),
      // What every listener heard since the last call, in order (then forgotten).
      Map.entry("heard", (lock, r) -> {
        synchronized (HEARD) {
          List<String> heard = List.copyOf(HEARD);
          HEARD.clear();
          return heard;
        }
      }));
}
