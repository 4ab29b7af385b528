package ioredisson.peer;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * One dedicated Java thread per thread number, for the peer's whole life: Redisson's lock owner is
 * {@code <clientId>:<Thread.getId()>}, so a number must always run on the same thread.
 */
final class Threads {
  private final Map<Integer, ExecutorService> byNumber = new ConcurrentHashMap<>();

  void submit(int number, Runnable task) {
    byNumber.computeIfAbsent(number, Threads::newThread).execute(task);
  }

  /** Lets queued commands finish for up to {@code graceMs}, then interrupts what still runs (a blocked lock()). */
  void shutdown(long graceMs) throws InterruptedException {
    byNumber.values().forEach(ExecutorService::shutdown);
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(graceMs);
    for (ExecutorService thread : byNumber.values()) {
      thread.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    }
    byNumber.values().forEach(ExecutorService::shutdownNow);
  }

  private static ExecutorService newThread(int number) {
    return Executors.newSingleThreadExecutor(task -> {
      Thread thread = new Thread(task, "peer-thread-" + number);
      thread.setDaemon(true);
      return thread;
    });
  }
}
