package ioredisson.peer;

import java.util.Map;
import org.redisson.api.RBucket;

/** A decimal counter in a string key, for exclusion tests: only a lock makes its increment safe. */
final class CounterOps {
  private CounterOps() {}

  static final Map<String, Op<RBucket<String>>> TABLE = Map.of(
      "get", (bucket, r) -> read(bucket),
      // Read, pause, write: loses updates unless the caller holds a lock.
      "unsafeIncrement", (bucket, r) -> {
        long value = read(bucket);
        Thread.sleep(r.longArg("pauseMs", 1));
        bucket.set(Long.toString(value + 1));
        return value + 1;
      });

  private static long read(RBucket<String> bucket) {
    String value = bucket.get();
    return value == null ? 0 : Long.parseLong(value);
  }
}
