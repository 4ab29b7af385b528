package ioredisson.peer;

import java.util.Map;
import java.util.function.Function;

/** A kind of object: how a request names its target, and the operations it offers. */
record Kind<T>(Function<Request, T> target, Map<String, Op<T>> ops) {

  Object run(Request request) throws Exception {
    Op<T> op = ops.get(request.op());
    if (op == null) {
      throw new IllegalArgumentException("unknown op " + request.op() + " for kind " + request.kind() + " (known: " + ops.keySet() + ")");
    }
    return op.apply(target.apply(request), request);
  }
}
