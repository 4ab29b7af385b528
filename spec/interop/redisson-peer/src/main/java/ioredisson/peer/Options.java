package ioredisson.peer;

import java.util.HashMap;
import java.util.Map;

/** Command-line options {@code --name value}, falling back to env {@code PEER_NAME} and then a default (an empty string: unset). */
final class Options {
  private Options() {}

  private static final Map<String, String> DEFAULTS = Map.of(
      "redis", "redis://127.0.0.1:6379",
      "cluster", "",
      "lock-watchdog-timeout", "30000");

  static Map<String, String> parse(String[] args) {
    Map<String, String> options = new HashMap<>();
    DEFAULTS.forEach((name, fallback) -> {
      String env = System.getenv("PEER_" + name.toUpperCase().replace('-', '_'));
      options.put(name, env != null && !env.isEmpty() ? env : fallback);
    });
    for (int i = 0; i < args.length; i += 2) {
      String name = args[i].startsWith("--") ? args[i].substring(2) : "";
      if (!DEFAULTS.containsKey(name) || i + 1 >= args.length) {
        throw new IllegalArgumentException("usage: [--redis URL | --cluster URL,URL,...] [--lock-watchdog-timeout MS], got " + args[i]);
      }
      options.put(name, args[i + 1]);
    }
    return options;
  }
}
