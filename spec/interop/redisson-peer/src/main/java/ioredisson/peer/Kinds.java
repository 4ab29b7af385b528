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
    return Map.ofEntries(
        Map.entry("peer", new Kind<>(r -> redisson, PeerOps.TABLE)),
        Map.entry("lock", new Kind<>(r -> redisson.getLock(r.name()), LockOps.TABLE)),
        Map.entry("fairLock", new Kind<>(r -> redisson.getFairLock(r.name()), LockOps.TABLE)),
        Map.entry("spinLock", new Kind<>(r -> redisson.getSpinLock(r.name()), LockOps.TABLE)),
        Map.entry("nonReentrantLock", new Kind<>(r -> redisson.getNonReentrantLock(r.name()), LockOps.TABLE)),
        Map.entry("nonReentrantFairLock", new Kind<>(r -> redisson.getNonReentrantFairLock(r.name()), LockOps.TABLE)),
        Map.entry("readLock", new Kind<>(r -> redisson.getReadWriteLock(r.name()).readLock(), LockOps.TABLE)),
        Map.entry("writeLock", new Kind<>(r -> redisson.getReadWriteLock(r.name()).writeLock(), LockOps.TABLE)),
        Map.entry("fencedLock", new Kind<>(r -> redisson.getFencedLock(r.name()), FencedLockOps.TABLE)),
        // Targets are cached by name: the caller makes the name unique per group and values.
        Map.entry("fasterMultiLock", new Kind<>(r -> redisson.getMultiLock(r.text("group"), GroupValues.of(r)), LockOps.TABLE)),
        Map.entry("semaphore", new Kind<>(r -> redisson.getSemaphore(r.name()), SemaphoreOps.TABLE)),
        Map.entry("expirableSemaphore", new Kind<>(r -> redisson.getPermitExpirableSemaphore(r.name()), ExpirableSemaphoreOps.TABLE)),
        Map.entry("latch", new Kind<>(r -> redisson.getCountDownLatch(r.name()), LatchOps.TABLE)),
        Map.entry("counter", new Kind<>(r -> redisson.<String>getBucket(r.name(), StringCodec.INSTANCE), CounterOps.TABLE)));
  }
}
