import { PubSubManager } from '../../lib/kernel/pubsub/manager';
import { TimerQueue } from '../../lib/kernel/timer-queue';
import { Topology } from '../../lib/kernel/topology/topology';
import type { TestRedis } from './redis-server';

/**
 * A fresh `PubSubManager` for each test, on a connection of `server` (classic pub/sub, 5 s subscribe
 * bound), shut down after the test. The manager subscribes on a duplicate of that connection, which
 * the server's teardown closes.
 */
export function usePubSubManager(server: () => TestRedis): () => PubSubManager {
  let manager: PubSubManager;
  beforeEach(() => {
    manager = new PubSubManager(new Topology(server().connect(), { shardedPubSub: 'off' }), {
      subscriptionTimeout: 5_000,
      timers: new TimerQueue(),
      onReconnect: () => undefined,
      onError: () => undefined,
    });
  });
  afterEach(async () => {
    await manager.shutdown();
  });
  return () => manager;
}
