import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Redis from 'ioredis';
import { AofSyncUnavailableError, RedissonClient, ReplicaSyncError, type RedissonOptions } from '../../lib';
import { hasWaitAof } from '../helpers/server-source';
import { commandCounts, commandsBetween, startRedis, type TestRedis } from '../helpers/redis-server';
import { startSentinel, type TestSentinel } from '../helpers/sentinel';

/*
 * replicaSync.aof (Redisson's ACK_AOF): WAITAOF after every lock write. On every server: one that cannot
 * confirm a write on disk (no WAITAOF before Redis 7.2, or appendonly off) fails the call with
 * AofSyncUnavailableError, an acquisition undone first. Where the server has WAITAOF (Redis 7.2+,
 * Valkey 8): a lone server with AOF (fsync on every write), and a primary with one replica, both with
 * AOF, whose replica is frozen (SIGSTOP) to make the replica's fsync go missing.
 */

const WAITAOF = hasWaitAof();
const AOF = ['--appendonly', 'yes', '--appendfsync', 'always'];
/** Fast failure settings: 3 rounds of a 200 ms WAITAOF. */
const QUICK_AOF: RedissonOptions = { replicaSync: { aof: true, timeout: 200, retries: 2, retryDelay: 50 } };

let plain: TestRedis;
let dir: string | undefined;
let lone: TestRedis | undefined;
let group: TestSentinel | undefined;
let clients: RedissonClient[] = [];

beforeAll(async () => {
  plain = await startRedis();
  if (WAITAOF) {
    dir = await mkdtemp(join(tmpdir(), 'ioredisson-aof-'));
    lone = await startRedis({ args: [...AOF, '--dir', dir] });
    group = await startSentinel({ replicas: 1, sentinels: 0, args: AOF });
  }
}, 120_000);

afterEach(async () => {
  if (group) group.resume(group.ports[1]!);
  await Promise.all(clients.map((c) => c.shutdown()));
  clients = [];
});

afterAll(async () => {
  await plain?.stop();
  await lone?.stop();
  await group?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
}, 60_000);

function client(redis: Redis, options?: RedissonOptions): RedissonClient {
  const redisson = new RedissonClient(redis, options);
  clients.push(redisson);
  return redisson;
}

/** Top-level commands a client sent (scripts, WAIT, WAITAOF) between two `commandCounts` snapshots. */
function sent(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  const delta = commandsBetween(before, after);
  return Object.fromEntries(['evalsha', 'eval', 'wait', 'waitaof'].filter((c) => delta[c]).map((c) => [c, delta[c]!]));
}

describe('replicaSync.aof on a server that cannot confirm writes on disk', () => {
  it(`rejects with AofSyncUnavailableError, the acquisition undone (${WAITAOF ? 'appendonly off' : 'no WAITAOF'})`, async () => {
    const admin = plain.connect();
    const redisson = client(plain.connect(), QUICK_AOF);
    const error = await redisson
      .getLock('aof-none')
      .tryLock({ waitTime: 5_000 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AofSyncUnavailableError);
    expect(error).toMatchObject({ code: 'ERR_AOF_SYNC_UNAVAILABLE', script: 'lock/acquire', key: 'aof-none' });
    expect((error as Error).message).toContain('replicaSync.aof = false');
    expect(String((error as Error).cause)).toMatch(WAITAOF ? /appendonly is disabled/ : /unknown command/i);
    expect(await admin.exists('aof-none')).toBe(0);
    expect(redisson.diagnostics()).toEqual({ channels: 0, waiters: 0, leases: 0 });
  });

  it('gives the permits of a semaphore acquisition back; a release stands and still rejects', async () => {
    const admin = plain.connect();
    const redisson = client(plain.connect(), QUICK_AOF);
    const semaphore = redisson.getSemaphore('aof-sem');
    await admin.set('aof-sem', '2'); // two permits, as trySetPermits (a synced write too) would set them
    await expect(semaphore.tryAcquire(1)).rejects.toMatchObject({
      code: 'ERR_AOF_SYNC_UNAVAILABLE',
      script: 'semaphore/try-acquire',
    });
    expect(await admin.get('aof-sem')).toBe('2');
    await expect(semaphore.release(1)).rejects.toBeInstanceOf(AofSyncUnavailableError);
    expect(await admin.get('aof-sem')).toBe('3'); // the release ran once, on the primary
  });
});

(WAITAOF ? describe : describe.skip)('replicaSync.aof where the server has WAITAOF', () => {
  it('sends WAITAOF after each lock write on a server without replicas, and none after a failed attempt', async () => {
    const admin = lone!.connect();
    const redisson = client(lone!.connect(), { replicaSync: { aof: true } });
    const other = client(lone!.connect(), { replicaSync: { aof: true } });
    await redisson.getLock('warm').using(() => undefined); // scripts loaded, replica count read
    await other.getLock('warm').using(() => undefined);
    const before = await commandCounts(admin);
    const handle = await redisson.getLock('aof-lone').acquire({ leaseTime: 30_000 });
    expect(await other.getLock('aof-lone').tryLock()).toBe(false); // wrote nothing: no WAITAOF
    await handle.release();
    expect(sent(before, await commandCounts(admin))).toEqual({ evalsha: 3, waitaof: 2 });
  });

  it('sends plain WAIT, and no WAITAOF, with aof left off (the default)', async () => {
    const primary = group!.direct(group!.ports[0]!);
    const redisson = client(group!.connect());
    await redisson.getLock('warm').using(() => undefined);
    const before = await commandCounts(primary);
    await redisson.getLock('aof-default').using(() => undefined);
    expect(sent(before, await commandCounts(primary))).toEqual({ evalsha: 2, wait: 2 });
  });

  it("waits for the replica's fsync too; undoes an acquisition whose replica never fsynced, then rejects", async () => {
    const primary = group!.direct(group!.ports[0]!);
    const replica = group!.direct(group!.ports[1]!);
    const redisson = client(group!.connect(), QUICK_AOF);
    await redisson.getLock('warm').using(() => undefined);
    let before = await commandCounts(primary);
    const handle = await redisson.getLock('aof-pair').acquire({ leaseTime: 30_000 });
    expect(sent(before, await commandCounts(primary))).toEqual({ evalsha: 1, waitaof: 1 });
    expect(await replica.exists('aof-pair')).toBe(1); // the replica had it (and fsynced it) before acquire returned
    await handle.release();

    group!.pause(group!.ports[1]!);
    before = await commandCounts(primary);
    const error = await redisson
      .getLock('aof-frozen')
      .tryLock({ waitTime: 10_000 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReplicaSyncError);
    expect(error).toMatchObject({ script: 'lock/acquire', replicas: 1, rounds: 3, aof: { local: true, acked: 0 } });
    expect((error as Error).message).toContain('the primary fsynced it, 0 of 1 replica(s) did');
    expect(sent(before, await commandCounts(primary))).toMatchObject({ evalsha: 3, waitaof: 3 });
    expect(await primary.exists('aof-frozen')).toBe(0);
    expect(redisson.diagnostics()).toEqual({ channels: 0, waiters: 0, leases: 0 });
  });
});
