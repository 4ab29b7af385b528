import { REPLICA_SYNC_DEFAULTS } from '../lib/options';
import { ReplicaSync } from '../lib/kernel/topology/replica-sync';
import { delay, useRedis } from './helpers/fixture';

const { server } = useRedis();

describe('replica sync during an outage', () => {
  // The replica count is refreshed in the background while the stale one serves. That refresh
  // failing (Redis down) was rethrown to nobody: an unhandled rejection, which ends a Node process
  // by default (seen in the chaos restart run: 4 of 8 workers died at once).
  it('a background refresh of the replica count that fails is reported, never left unhandled', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    const node = server().connect();
    const reported: string[] = [];
    let now = 0;
    const sync = new ReplicaSync(
      () => node,
      REPLICA_SYNC_DEFAULTS,
      (_error, what) => reported.push(what),
      () => now,
    );
    try {
      sync.mayWait('key'); // the first count, read behind the write
      await sync.sync('key'); // waits for it: 0 replicas
      node.disconnect();
      now += 60_000; // stale: the next write refreshes it in the background
      sync.mayWait('key');
      await delay(100);
      expect(reported).toEqual(['replica sync: INFO replication failed']);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
