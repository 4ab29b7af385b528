package ioredisson.peer;

import static java.util.concurrent.TimeUnit.MILLISECONDS;

import java.util.Map;
import org.redisson.api.RSemaphore;

/** RSemaphore operations; {@code permits} defaults to 1. {@code acquire} waits without a bound, as Redisson's does. */
final class SemaphoreOps {
  private SemaphoreOps() {}

  static final Map<String, Op<RSemaphore>> TABLE = Map.of(
      "trySetPermits", (semaphore, r) -> semaphore.trySetPermits((int) r.requiredLong("permits")),
      "acquire", (semaphore, r) -> {
        semaphore.acquire(permits(r));
        return null;
      },
      "tryAcquire", (semaphore, r) -> semaphore.tryAcquire(permits(r), r.longArg("waitMs", 0), MILLISECONDS),
      "release", (semaphore, r) -> {
        semaphore.release(permits(r));
        return null;
      },
      "availablePermits", (semaphore, r) -> semaphore.availablePermits(),
      // delta may be negative: a capacity cut.
      "addPermits", (semaphore, r) -> {
        semaphore.addPermits((int) r.requiredLong("permits"));
        return null;
      },
      "drainPermits", (semaphore, r) -> semaphore.drainPermits(),
      "delete", (semaphore, r) -> semaphore.delete());

  private static int permits(Request r) {
    return (int) r.longArg("permits", 1);
  }
}
