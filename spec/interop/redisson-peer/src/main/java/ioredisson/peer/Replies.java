package ioredisson.peer;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintStream;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/** Writes one JSON line per reply or event to the protocol stream, whole lines from any thread. */
final class Replies {
  private final ObjectMapper json;
  private final PrintStream out;

  Replies(ObjectMapper json, PrintStream out) {
    this.json = json;
    this.out = out;
  }

  void ok(long id, Object value) {
    ObjectNode reply = json.createObjectNode().put("id", id).put("ok", true);
    reply.set("value", json.valueToTree(value));
    write(reply);
  }

  void error(long id, Throwable error) {
    write(json.createObjectNode().put("id", id).put("ok", false).put("error", describe(error)));
  }

  void write(ObjectNode line) {
    String text = line.toString();
    synchronized (out) {
      out.println(text);
      out.flush();
    }
  }

  /**
   * {@code SimpleClassName: message} of the error, futures' wrappers removed, followed by
   * {@code (cause: SimpleClassName: message)} for each cause it wraps (Redisson wraps some script
   * errors, e.g. an unknown permit id, in a RedisException).
   */
  static String describe(Throwable error) {
    Throwable cause = error;
    while ((cause instanceof CompletionException || cause instanceof ExecutionException) && cause.getCause() != null) {
      cause = cause.getCause();
    }
    StringBuilder text = new StringBuilder(cause.getClass().getSimpleName() + ": " + cause.getMessage());
    for (Throwable inner = cause.getCause(); inner != null && inner != inner.getCause(); inner = inner.getCause()) {
      text.append(" (cause: ").append(inner.getClass().getSimpleName()).append(": ").append(inner.getMessage()).append(')');
    }
    return text.toString();
  }
}
