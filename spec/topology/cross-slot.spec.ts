import { DeadlockError, type BaseLock, type RedissonClient, type RedissonOptions } from '../../lib';
import { LOCK_KINDS } from '../contract/kinds';
import { lockOf } from '../contract/lock-contract';
import { delay } from '../helpers/fixture';
import { clusterTopology, useTopology } from '../helpers/topology';

/*
 * No CROSSSLOT, and no other cluster error, for any primitive and name shape: on three primaries
 * with one replica each (replica sync on), every lock kind, both semaphores and the count-down
 * latch run their main operations (acquire, a waiter woken by a release, renewal by the watchdog,
 * release, force-unlock or delete, queries) under a name without braces, with a `{tag}` prefix and
 * with braces in the middle. Classic and sharded pub/sub alike.
 */

const cluster = useTopology(clusterTopology());

/** Names of every shape; the suffix keeps the three apart (and their slots apart from each other). */
const SHAPES = [(id: string) => `xs-${id}`, (id: string) => `{xs-tag}-${id}`, (id: string) => `xs{${id}}mid`];

/** What a client reports to its logger and as errors: none of it may be a cluster error. */
const CLUSTER_ERROR = /CROSSSLOT|MOVED|ASK|CLUSTERDOWN|non local key|same slot|redirections/i;

describe.each(['on', 'off'] as const)('every primitive on a Cluster, shardedPubSub %s', (sharded) => {
  let logged: string[];
  let clients: RedissonClient[];
  const make = (options: RedissonOptions = {}): RedissonClient => {
    const logger = {
      debug: (message: string, details?: Record<string, unknown>) => {
        const error = details?.error;
        logged.push(`${message} ${error instanceof Error ? error.message : JSON.stringify(error ?? '')}`);
      },
    };
    const client = cluster.client({ shardedPubSub: sharded, logger, lockWatchdogTimeout: 1_500, ...options });
    clients.push(client);
    return client;
  };
  beforeEach(() => {
    logged = [];
    clients = [];
  });
  afterEach(() => {
    expect(logged.filter((line) => CLUSTER_ERROR.test(line))).toEqual([]);
  });

  for (const subject of LOCK_KINDS) {
    it.each(SHAPES.map((shape) => shape(subject.kind)))(`${subject.kind} named %s`, async (name) => {
      const holder = make();
      const waiter = make();
      const blockerOf = (client: RedissonClient): BaseLock =>
        subject.shared ? lockOf(client, { ...subject, factory: subject.shared.excludedBy }, name) : lockOf(client, subject, name);
      const lock = lockOf(holder, subject, name);
      // Held by the watchdog (1.5 s leases, renewed every 0.5 s) across a renewal or two, queried, then released to a waiting client.
      const handle = await lock.acquire();
      await delay(1_000);
      expect(handle.signal.aborted).toBe(false);
      expect(await lock.isLocked()).toBe(true);
      expect(await lock.isHeldByThread(handle.threadId)).toBe(true);
      expect(await lock.getHoldCount({ threadId: handle.threadId })).toBe(1);
      expect(await lock.remainTimeToLive()).toBeGreaterThan(0);
      const waiting = blockerOf(waiter).tryLock({ waitTime: 20_000 });
      await delay(200);
      await handle.release();
      expect(await waiting).toBe(true);
      await blockerOf(waiter).unlock();
      // Force-unlocked behind a holder's back, which its watchdog then reports.
      const again = await lock.acquire();
      expect(await lock.forceUnlock()).toBe(true);
      expect(await lock.isLocked()).toBe(false);
      await expect(again.release()).rejects.toThrow();
      expect(await lock.forceUnlock()).toBe(false);
    });
  }

  it.each(SHAPES.map((shape) => shape('sem')))('RSemaphore named %s', async (name) => {
    const semaphore = make().getSemaphore(name);
    const other = make().getSemaphore(name);
    expect(await semaphore.trySetPermits(1)).toBe(true);
    const held = await semaphore.acquire();
    expect(await other.tryAcquire()).toBeNull();
    const waiting = other.tryAcquire(1, { waitTime: 20_000 });
    await delay(200);
    await held.release();
    const handle = await waiting;
    expect(handle).not.toBeNull();
    await handle!.release();
    await semaphore.release(2);
    expect(await semaphore.releaseIfExists(1)).toBe(true);
    await semaphore.addPermits(-1);
    expect(await semaphore.availablePermits()).toBe(3);
    expect(await semaphore.drainPermits()).toBe(3);
    expect(await semaphore.delete()).toBe(true);
  });

  it.each(SHAPES.map((shape) => shape('pes')))('RPermitExpirableSemaphore named %s', async (name) => {
    const semaphore = make().getPermitExpirableSemaphore(name);
    const other = make().getPermitExpirableSemaphore(name);
    expect(await semaphore.trySetPermits(2)).toBe(true);
    // A watchdog lease, renewed across a renewal or two; a lease-time permit, updated and read.
    const kept = await semaphore.acquire({ watchdog: true });
    const timed = await semaphore.acquire({ leaseTime: 30_000 });
    await delay(1_000);
    expect(kept.signal.aborted).toBe(false);
    expect(await semaphore.updateLeaseTime(timed.permitId!, 20_000)).toBe(true);
    expect(await semaphore.getLeaseTime(timed.permitId!)).toBeGreaterThan(0);
    expect(await semaphore.acquiredPermits()).toBe(2);
    const waiting = other.tryAcquire({ waitTime: 20_000 });
    await delay(200);
    await semaphore.release(timed.permitId!);
    const handle = await waiting;
    expect(handle).not.toBeNull();
    await handle!.release();
    await kept.release();
    await semaphore.addPermits(1);
    await semaphore.setPermits(2);
    expect(await semaphore.availablePermits()).toBe(2);
    expect(await semaphore.getPermits()).toBe(2);
    expect(await semaphore.delete()).toBe(true);
  });

  it.each(SHAPES.map((shape) => shape('latch')))('RCountDownLatch named %s', async (name) => {
    const latch = make().getCountDownLatch(name);
    expect(await latch.trySetCount(2)).toBe(true);
    expect(await latch.getCount()).toBe(2);
    const waiting = make().getCountDownLatch(name).await({ waitTime: 20_000 });
    await delay(200);
    await latch.countDown();
    const countedAt = performance.now();
    await latch.countDown();
    expect(await waiting).toBe(true);
    // Opened by the message, not by the waiter's own periodic re-check.
    expect(performance.now() - countedAt).toBeLessThan(2_500);
    expect(await latch.getCount()).toBe(0);
    expect(await latch.trySetCount(1)).toBe(true);
    expect(await latch.delete()).toBe(true);
  });

  it('finds a deadlock of two clients whose records and locks sit in four slots', async () => {
    const options = { ownerInfo: { service: 'cross-slot' }, deadlockDetection: { after: 300 } };
    const [first, second] = [make(options), make(options)];
    const names = [`xs-dl-${sharded}`, `{xs-tag}-dl-${sharded}`];
    const crossed = (client: RedissonClient, hold: string, wait: string, pause: number) =>
      client.run(async () => {
        const held = await client.getLock(hold).acquire();
        try {
          await delay(pause);
          await (await client.getLock(wait).acquire({ waitTime: 20_000 })).release();
          return 'acquired';
        } catch (error) {
          return error;
        } finally {
          await held.release();
        }
      });
    const outcomes = await Promise.all([crossed(first, names[0]!, names[1]!, 100), crossed(second, names[1]!, names[0]!, 300)]);
    // The second's wait began later: it is the youngest, and the only one to give up.
    expect(outcomes[0]).toBe('acquired');
    expect(outcomes[1]).toBeInstanceOf(DeadlockError);
    expect((outcomes[1] as DeadlockError).cycle.map((wait) => wait.lockName)).toEqual([names[0], names[1]]);
  });
});
