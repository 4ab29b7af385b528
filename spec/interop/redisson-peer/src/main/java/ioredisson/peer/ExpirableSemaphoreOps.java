package ioredisson.peer;

import static java.util.concurrent.TimeUnit.MILLISECONDS;

import java.util.Map;
import org.redisson.api.RPermitExpirableSemaphore;

/**
 * RPermitExpirableSemaphore operations on one permit at a time; ids are Redisson's 32 hex characters.
 * {@code leaseMs} -1 (the default) means a permit that never expires.
 */
final class ExpirableSemaphoreOps {
  private ExpirableSemaphoreOps() {}

  static final Map<String, Op<RPermitExpirableSemaphore>> TABLE = Map.of(
      "trySetPermits", (semaphore, r) -> semaphore.trySetPermits((int) r.requiredLong("permits")),
      "acquire", (semaphore, r) -> {
        long leaseMs = r.longArg("leaseMs", -1);
        return leaseMs < 0 ? semaphore.acquire() : semaphore.acquire(leaseMs, MILLISECONDS);
      },
      // The permit's id, or null when none could be had within waitMs.
      "tryAcquire", (semaphore, r) -> semaphore.tryAcquire(r.longArg("waitMs", 0), r.longArg("leaseMs", -1), MILLISECONDS),
      "release", (semaphore, r) -> {
        semaphore.release(r.text("permitId"));
        return null;
      },
      "tryRelease", (semaphore, r) -> semaphore.tryRelease(r.text("permitId")),
      "availablePermits", (semaphore, r) -> semaphore.availablePermits(),
      "acquiredPermits", (semaphore, r) -> semaphore.acquiredPermits(),
      // delta may be negative: a capacity cut.
      "addPermits", (semaphore, r) -> {
        semaphore.addPermits((int) r.requiredLong("permits"));
        return null;
      },
      "delete", (semaphore, r) -> semaphore.delete());
}
