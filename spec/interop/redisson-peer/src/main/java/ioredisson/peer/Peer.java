package ioredisson.peer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * A Redisson client driven by JSON lines: commands on stdin, replies on stdout (nothing else is
 * written there). On start it prints {@code {"event":"ready","clientId":...}}; at the end of stdin it lets
 * running commands finish for up to 2 s, then exits. Options: {@code --redis URL} (env PEER_REDIS, default redis://127.0.0.1:6379),
 * {@code --cluster URL,URL,...} (env PEER_CLUSTER: a Redis Cluster's node addresses, used instead of
 * {@code --redis} when given) and {@code --lock-watchdog-timeout MS} (env PEER_LOCK_WATCHDOG_TIMEOUT,
 * default Redisson's 30000).
 */
public final class Peer {
  private Peer() {}

  public static void main(String[] args) throws Exception {
    PrintStream protocol = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
    System.setOut(System.err); // a stray println from any library must not corrupt the protocol
    Map<String, String> options = Options.parse(args);
    ObjectMapper json = new ObjectMapper();
    Replies replies = new Replies(json, protocol);

    RedissonClient redisson = Redisson.create(config(options));
    Map<String, Kind<?>> kinds = Kinds.of(redisson);
    Threads threads = new Threads();
    replies.write(json.createObjectNode()
        .put("event", "ready")
        .put("clientId", redisson.getId())
        .put("redissonVersion", redissonVersion())
        .put("lockWatchdogTimeout", redisson.getConfig().getLockWatchdogTimeout()));

    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      if (line.isBlank()) continue;
      Request request;
      try {
        request = Request.parse(json.readTree(line));
      } catch (Exception error) {
        replies.error(-1, new IllegalArgumentException("bad request line " + line + ": " + error.getMessage()));
        continue;
      }
      Kind<?> kind = kinds.get(request.kind());
      if (kind == null) {
        replies.error(request.id(), new IllegalArgumentException("unknown kind " + request.kind()));
        continue;
      }
      threads.submit(request.thread(), () -> {
        try {
          replies.ok(request.id(), kind.run(request));
        } catch (Throwable error) {
          replies.error(request.id(), error);
        }
      });
    }
    threads.shutdown(2_000);
    redisson.shutdown(0, 2, TimeUnit.SECONDS);
    System.exit(0);
  }

  private static Config config(Map<String, String> options) {
    Config config = new Config();
    // Redisson's default codec (Kryo5Codec), as a service that sets none: a group multi-lock hashes
    // its values' codec bytes. The counter kind asks for StringCodec itself.
    config.setLockWatchdogTimeout(Long.parseLong(options.get("lock-watchdog-timeout")));
    String cluster = options.get("cluster");
    if (cluster.isEmpty()) {
      config.useSingleServer()
          .setAddress(options.get("redis"))
          .setConnectionMinimumIdleSize(2)
          .setSubscriptionConnectionMinimumIdleSize(1);
    } else {
      // Redisson's cluster defaults otherwise, sharded pub/sub (ShardedSubscriptionMode.AUTO) included.
      config.useClusterServers()
          .addNodeAddress(cluster.split(","))
          .setMasterConnectionMinimumIdleSize(2)
          .setSlaveConnectionMinimumIdleSize(2)
          .setSubscriptionConnectionMinimumIdleSize(1);
    }
    return config;
  }

  private static String redissonVersion() throws Exception {
    Properties properties = new Properties();
    try (InputStream in = Peer.class.getResourceAsStream("/peer.properties")) {
      if (in != null) properties.load(in);
    }
    return properties.getProperty("redisson.version", "unknown");
  }
}
