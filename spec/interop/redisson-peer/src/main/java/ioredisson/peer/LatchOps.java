package ioredisson.peer;

import static java.util.concurrent.TimeUnit.MILLISECONDS;

import java.util.Map;
import org.redisson.api.RCountDownLatch;

/** RCountDownLatch operations. {@code await} without {@code waitMs} waits without a bound (message-driven, as Redisson's). */
final class LatchOps {
  private LatchOps() {}

  static final Map<String, Op<RCountDownLatch>> TABLE = Map.of(
      "trySetCount", (latch, r) -> latch.trySetCount(r.requiredLong("count")),
      "countDown", (latch, r) -> {
        latch.countDown();
        return null;
      },
      "await", (latch, r) -> {
        long waitMs = r.longArg("waitMs", -1);
        if (waitMs >= 0) return latch.await(waitMs, MILLISECONDS);
        latch.await();
        return true;
      },
      "getCount", (latch, r) -> latch.getCount(),
      "delete", (latch, r) -> latch.delete());
}
