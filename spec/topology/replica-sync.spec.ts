import type Redis from 'ioredis';
import { RedissonClient, ReplicaSyncError, type RedissonOptions } from '../../lib';
import { commandCounts, commandsBetween, eventually, startRedis, type TestRedis } from '../helpers/redis-server';
import { startSentinel, type TestSentinel } from '../helpers/sentinel';

/*
 * Replica sync on a primary with one replica (no sentinel): WAIT after every write of every kind, on the
 * connection that wrote; what happens when the replica does not answer (it is frozen with SIGSTOP);
 * and no WAIT at all on a server without replicas.
 */

let group: TestSentinel;
let primary: Redis;
let replicaPort: number;
let lone: TestRedis;
let clients: RedissonClient[] = [];

beforeAll(async () => {
  group = await startSentinel({ replicas: 1, sentinels: 0 });
  primary = group.direct(group.ports[0]!);
  replicaPort = group.ports[1]!;
  lone = await startRedis();
}, 120_000);

afterEach(async () => {
  group.resume(replicaPort);
  await Promise.all(clients.map((c) => c.shutdown()));
  clients = [];
  await primary.flushall();
});

afterAll(async () => {
  await group?.stop();
  await lone?.stop();
}, 60_000);

function client(options?: RedissonOptions): RedissonClient {
  const redisson = new RedissonClient(group.connect(), options);
  clients.push(redisson);
  return redisson;
}

/**
 * Top-level commands a client sends for a lock (commandstats also counts the calls scripts make).
 * INFO is left out: the count snapshots are INFO calls themselves.
 */
function sent(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  const delta = commandsBetween(before, after);
  return Object.fromEntries(['evalsha', 'eval', 'wait', 'waitaof'].filter((c) => delta[c]).map((c) => [c, delta[c]!]));
}

/** Fast failure settings for a frozen replica: 3 rounds of a 200 ms WAIT. */
const QUICK: RedissonOptions = { replicaSync: { timeout: 200, retries: 2, retryDelay: 50 } };

describe('replica sync', () => {
  it('sends WAIT for the connected replica after each lock write, and none after a failed attempt', async () => {
    const redisson = client();
    const other = client();
    await redisson.getLock('warm').using(() => undefined); // scripts loaded, replica count read
    const before = await commandCounts(primary);
    const handle = await redisson.getLock('rs').acquire({ leaseTime: 30_000 });
    expect(await other.getLock('rs').tryLock()).toBe(false); // wrote nothing: no WAIT
    await handle.release();
    expect(sent(before, await commandCounts(primary))).toEqual({ evalsha: 3, wait: 2 });
    expect(await group.direct(replicaPort).exists('rs')).toBe(0);
  });

  it('sends no WAIT with replicaSync.enabled false', async () => {
    const redisson = client({ replicaSync: { enabled: false } });
    await redisson.getLock('warm').using(() => undefined);
    const before = await commandCounts(primary);
    await redisson.getLock('off').using(() => undefined);
    expect(sent(before, await commandCounts(primary))).toEqual({ evalsha: 2 });
  });

  it('undoes an acquisition no replica acknowledged, retries, then rejects with ReplicaSyncError', async () => {
    const redisson = client(QUICK);
    const debug: string[] = [];
    const logged = client({ ...QUICK, logger: { debug: (message) => debug.push(message) } });
    await redisson.getLock('warm').using(() => undefined);
    await logged.getLock('warm').using(() => undefined);
    group.pause(replicaPort);
    const before = await commandCounts(primary);
    const startedAt = performance.now();
    const error = await logged.getLock('frozen').tryLock({ waitTime: 10_000 }).catch((e: unknown) => e);
    const took = performance.now() - startedAt;
    expect(error).toBeInstanceOf(ReplicaSyncError);
    expect(error).toMatchObject({ code: 'ERR_REPLICA_SYNC', script: 'lock/acquire', key: 'frozen', replicas: 1, rounds: 3 });
    expect(took).toBeGreaterThanOrEqual(3 * 200);
    expect(took).toBeLessThan(10_000);
    const delta = commandsBetween(before, await commandCounts(primary));
    expect(delta.wait).toBe(3);
    expect(delta.evalsha).toBe(3); // three acquisitions, each undone (trim is sent as EVAL text)
    expect(await primary.exists('frozen')).toBe(0); // undone on the primary: nobody holds it
    expect(debug.filter((m) => m.includes('replica sync of lock/acquire'))).toHaveLength(2);
    expect(logged.diagnostics()).toEqual({ channels: 0, waiters: 0, leases: 0 });
    group.resume(replicaPort);
    expect(await redisson.getLock('frozen').tryLock()).toBe(true); // healthy again
    await redisson.getLock('frozen').unlock();
  });

  it('re-sends an unlock no replica acknowledged with the same request id, then rejects', async () => {
    const redisson = client(QUICK);
    const handle = await redisson.getLock('unlock-frozen').acquire({ leaseTime: 30_000 });
    group.pause(replicaPort);
    const before = await commandCounts(primary);
    const error = await handle.release().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReplicaSyncError);
    expect(error).toMatchObject({ script: 'lock/unlock', rounds: 3 });
    expect(commandsBetween(before, await commandCounts(primary))).toMatchObject({ evalsha: 3, wait: 3 });
    // Released on the primary once; the re-sends were replays of one request (one latch).
    expect(await primary.exists('unlock-frozen')).toBe(0);
    expect(await primary.keys('redisson_unlock_latch:*')).toHaveLength(1);
    group.resume(replicaPort);
  });

  it('gives back the permits a semaphore release took for a parked waiter when no replica acknowledged it, then rejects both', async () => {
    const redisson = client(QUICK);
    const semaphore = () => redisson.getSemaphore('rs-pass');
    await semaphore().trySetPermits(1);
    const held = await semaphore().acquire();
    const waiting = semaphore().acquire({ waitTime: 20_000 });
    waiting.catch(() => undefined);
    await eventually(() => redisson.diagnostics().waiters === 1, 5_000, 'the waiter parked');
    group.pause(replicaPort);
    const error = await held.release().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReplicaSyncError);
    expect(error).toMatchObject({ script: 'semaphore/release-and-acquire', rounds: 3 });
    await expect(waiting).rejects.toBeInstanceOf(ReplicaSyncError);
    // The release stays on the primary (it is never sent twice); the waiter's permit went back.
    expect(await primary.get('rs-pass')).toBe('1');
    expect(redisson.diagnostics().waiters).toBe(0);
    group.resume(replicaPort);
  });

  it('sends WAIT after the writes of other kinds too: a semaphore acquire and release, a fair-lock unlock, a count-down', async () => {
    const redisson = client();
    const other = client();
    // Scripts loaded, replica count read.
    await redisson.getSemaphore('warm-sem').trySetPermits(1);
    await redisson.getSemaphore('warm-sem').using(() => undefined);
    await redisson.getFairLock('warm-fair').using(() => undefined);
    await redisson.getCountDownLatch('warm-latch').countDown();
    const semaphore = redisson.getSemaphore('rs-sem');
    expect(await semaphore.trySetPermits(1)).toBe(true);
    const fair = await redisson.getFairLock('rs-fair').acquire({ leaseTime: 30_000 });
    await redisson.getCountDownLatch('rs-latch').trySetCount(2);

    let before = await commandCounts(primary);
    const permit = await semaphore.acquire();
    expect(sent(before, await commandCounts(primary))).toEqual({ evalsha: 1, wait: 1 });
    before = await commandCounts(primary);
    expect(await other.getSemaphore('rs-sem').tryAcquire()).toBeNull(); // took nothing: no WAIT
    expect(sent(before, await commandCounts(primary))).toEqual({ evalsha: 1 });
    before = await commandCounts(primary);
    await permit.release();
    expect(sent(before, await commandCounts(primary))).toEqual({ evalsha: 1, wait: 1 });
    before = await commandCounts(primary);
    await fair.release();
    expect(sent(before, await commandCounts(primary))).toEqual({ evalsha: 1, wait: 1 });
    before = await commandCounts(primary);
    await redisson.getCountDownLatch('rs-latch').countDown();
    expect(sent(before, await commandCounts(primary))).toEqual({ evalsha: 1, wait: 1 });
    before = await commandCounts(primary);
    await semaphore.availablePermits(); // a read: never a WAIT
    await redisson.getCountDownLatch('rs-latch').getCount();
    expect(sent(before, await commandCounts(primary))).toEqual({});
  });

  it('gives back the permits of an acquisition no replica acknowledged; a release runs once and only waits again', async () => {
    const redisson = client(QUICK);
    const semaphore = redisson.getSemaphore('frozen-sem');
    await semaphore.trySetPermits(2);
    group.pause(replicaPort);
    let before = await commandCounts(primary);
    const error = await semaphore.tryAcquire(1).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReplicaSyncError);
    expect(error).toMatchObject({ script: 'semaphore/try-acquire', rounds: 3 });
    // Three acquisitions, each given back: the count is whole on the primary.
    expect(commandsBetween(before, await commandCounts(primary))).toMatchObject({ evalsha: 6, wait: 3 });
    expect(await primary.get('frozen-sem')).toBe('2');
    before = await commandCounts(primary);
    const released = await semaphore.release(1).catch((e: unknown) => e);
    expect(released).toMatchObject({ code: 'ERR_REPLICA_SYNC', script: 'semaphore/release', rounds: 3 });
    // Sent once, waited for three times: the release counted once.
    expect(commandsBetween(before, await commandCounts(primary))).toMatchObject({ evalsha: 1, wait: 3 });
    expect(await primary.get('frozen-sem')).toBe('3');
    group.resume(replicaPort);
  });

  it('undoes a fair-lock acquisition no replica acknowledged and leaves nobody holding it', async () => {
    const redisson = client(QUICK);
    const lock = redisson.getFairLock('frozen-fair');
    group.pause(replicaPort);
    const error = await lock.tryLock().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'ERR_REPLICA_SYNC', script: 'fair-lock/acquire', rounds: 3 });
    expect(await primary.exists('frozen-fair')).toBe(0);
    expect(redisson.diagnostics()).toEqual({ channels: 0, waiters: 0, leases: 0 });
    group.resume(replicaPort);
    expect(await lock.tryLock()).toBe(true);
    await lock.unlock();
  });

  it('costs a server without replicas no WAIT and no command beyond the scripts', async () => {
    const redis = lone.connect();
    const redisson = new RedissonClient(redis);
    clients.push(redisson);
    const admin = lone.connect();
    await redisson.getLock('warm').using(() => undefined);
    const before = await commandCounts(admin);
    for (let i = 0; i < 5; i++) await redisson.getLock('solo').using(() => undefined);
    const after = await commandCounts(admin);
    expect(sent(before, after)).toEqual({ evalsha: 10 });
    expect(commandsBetween(before, after, []).info).toBe(1); // the first snapshot's own INFO: the count is cached
  });

  it('costs a server without replicas no WAIT for the other kinds either', async () => {
    const redisson = new RedissonClient(lone.connect());
    clients.push(redisson);
    const admin = lone.connect();
    const semaphore = redisson.getSemaphore('solo-sem');
    await semaphore.trySetPermits(1);
    await redisson.getFairLock('solo-fair').using(() => undefined);
    const before = await commandCounts(admin);
    for (let i = 0; i < 3; i++) {
      await semaphore.using(() => undefined);
      await redisson.getFairLock('solo-fair').using(() => undefined);
      await redisson.getPermitExpirableSemaphore('solo-pes').trySetPermits(1);
      await redisson.getCountDownLatch('solo-latch').trySetCount(1);
      await redisson.getCountDownLatch('solo-latch').countDown();
    }
    const delta = commandsBetween(before, await commandCounts(admin));
    expect(delta.wait ?? 0).toBe(0);
    expect(delta.evalsha).toBeGreaterThanOrEqual(12);
  });
});
