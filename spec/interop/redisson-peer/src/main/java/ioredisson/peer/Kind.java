package ioredisson.peer;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * A kind of object: how a request's target is made, and the operations it offers. Targets are made
 * once per name and reused, as a Java service keeps its {@code RLock} in a field: Redisson objects
 * carry state between calls (an RLock remembers the lease of its last acquisition for unlock).
 */
final class Kind<T> {
  private final Function<Request, T> factory;
  private final Map<String, Op<T>> ops;
  private final Map<String, T> targets = new ConcurrentHashMap<>();

  Kind(Function<Request, T> factory, Map<String, Op<T>> ops) {
    this.factory = factory;
    this.ops = ops;
  }

  Object run(Request request) throws Exception {
    Op<T> op = ops.get(request.op());
    if (op == null) {
      throw new IllegalArgumentException("unknown op " + request.op() + " for kind " + request.kind() + " (known: " + ops.keySet() + ")");
    }
    String key = request.body().path("name").asText("");
    return op.apply(targets.computeIfAbsent(key, name -> factory.apply(request)), request);
  }
}
