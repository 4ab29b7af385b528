import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import Redis from 'ioredis';
import type { RedisOptions } from 'ioredis';
import {
  InvalidArgumentError,
  LockNotHeldError,
  MEMBER_REPLY_BOUND_MS,
  QuorumError,
  RedLockHandle,
  RedissonClient,
  clockDrift,
  type MemberOutcome,
  type RedissonOptions,
} from '../lib';
import { lockChannel } from '../lib/keys';
import { delay } from './helpers/fixture';
import { checkExclusion, type SectionEvent } from './helpers/exclusion';
import { ChaosProxy } from './helpers/proxy';
import { eventually, subscriberCount } from './helpers/redis-server';
import { startServers, type StoppableRedis } from './helpers/servers';
import { trackTimers } from './helpers/timers';

/** RedLock over five independent servers. */
const NAME = 'redlock:order';
const WORKER = join(__dirname, 'fixtures', 'redlock-worker.mjs');
/** Members fail fast while their server is down: an outage is `unreachable`, at once. */
const FAIL_FAST: RedisOptions = { enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => 100 };

let servers: StoppableRedis[];
let admins: Redis[];
let clients: RedissonClient[] = [];

beforeAll(async () => {
  servers = await startServers(5);
  admins = servers.map((server) => server.connect(FAIL_FAST));
}, 60_000);
beforeEach(async () => {
  await Promise.all(servers.map((server) => server.start()));
  await Promise.all(admins.map((admin) => (admin.status === 'ready' ? Promise.resolve() : once(admin, 'ready'))));
  await Promise.all(admins.map(async (admin) => (await admin.flushall(), await admin.script('FLUSH'))));
});
afterEach(async () => {
  await Promise.all(clients.map((client) => client.shutdown()));
  clients = [];
});
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

/** One client per server (connected before it is used), a contender of its own. */
async function contender(options?: RedissonOptions): Promise<RedissonClient[]> {
  return Promise.all(
    servers.map(async (server) => {
      const redis = server.connect(FAIL_FAST);
      if (server.running) await once(redis, 'ready');
      const client = new RedissonClient(redis, options);
      clients.push(client);
      return client;
    }),
  );
}

const redLockOf = (of: RedissonClient[], name = NAME) => of[0]!.getRedLock(...of.map((client) => client.getLock(name)));
/** Keys on the running servers. */
const liveKeys = async (): Promise<string[]> =>
  (await Promise.all(servers.map(async (server, i) => (server.running ? admins[i]!.keys('*') : [])))).flat().sort();
const nothingLeft = () => eventually(async () => (await liveKeys()).length === 0, 5_000, 'no key on any live server');
const statuses = (outcomes: readonly MemberOutcome[]) => outcomes.map((outcome) => outcome.status);

describe('RedLock over five servers', () => {
  it('takes all five in one round trip each, with validity = lease - elapsed - drift', async () => {
    const c = await contender();
    const redLock = redLockOf(c);
    expect(redLock.quorum).toBe(3);
    const handle = await redLock.acquire({ leaseTime: 10_000 });
    expect(handle).toBeInstanceOf(RedLockHandle);
    expect(handle.held).toBe(5);
    expect(handle.validity).toBeLessThanOrEqual(10_000 - clockDrift(10_000));
    expect(handle.validity).toBeGreaterThan(5_000);
    expect(await liveKeys()).toEqual(Array(5).fill(NAME));
    expect(await redLock.isHeldByThread(handle.threadId)).toBe(true);
    await handle.release();
    await nothingLeft();
    expect(await redLock.tryLock()).toBe(true);
    await redLock.unlock();
    await expect(redLock.unlock()).rejects.toBeInstanceOf(LockNotHeldError);
    await nothingLeft();
  });

  it('sends every member its acquire script, then its unlock script, all at once before any reply; latches go later', async () => {
    const log: string[] = [];
    /** Per server, the DELs the latch reaper sent: they go on its own timer, off the release's path. */
    const dels = [0, 0, 0, 0, 0];
    const connections = await Promise.all(
      servers.map(async (server) => {
        const redis = server.connect(FAIL_FAST);
        await once(redis, 'ready');
        return redis;
      }),
    );
    // What each member's connection sends, and when its replies come back.
    connections.forEach((redis, i) => {
      const send = redis.sendCommand.bind(redis);
      redis.sendCommand = (command, stream) => {
        if (command.name === 'del') {
          dels[i]! += 1;
        } else {
          log.push(`send ${i} ${command.name}`);
          command.promise.then(
            () => log.push(`reply ${i} ${command.name}`),
            () => log.push(`error ${i} ${command.name}`),
          );
        }
        return send(command, stream);
      };
    });
    const c = connections.map((redis) => new RedissonClient(redis));
    clients.push(...c);
    const redLock = redLockOf(c);
    await (await redLock.acquire()).release(); // loads the scripts, reads the replica counts
    await nothingLeft();
    dels.fill(0);
    const members = [0, 1, 2, 3, 4];
    const oneBatch = [...members.map((i) => `send ${i} evalsha`), ...members.map((i) => `reply ${i} evalsha`)];
    const batch = () => {
      const sent = log.splice(0);
      return [...sent.slice(0, 5), ...sent.slice(5).sort()];
    };
    const cycles = 3;
    log.length = 0;
    for (let cycle = 0; cycle < cycles; cycle++) {
      const handle = await redLock.acquire();
      expect(batch()).toEqual(oneBatch);
      await handle.release();
      expect(batch()).toEqual(oneBatch);
    }
    await nothingLeft(); // every latch deleted: at most one DEL per server and cycle, batched
    for (const count of dels) expect(count).toBeGreaterThanOrEqual(1);
    for (const count of dels) expect(count).toBeLessThanOrEqual(cycles);
  });

  it('a member whose reply comes after the reply bound counts as timed out; its hold is given back when it lands', async () => {
    const proxy = await ChaosProxy.start(servers[4]!.port);
    const slowConnection = new Redis(proxy.url, { maxRetriesPerRequest: null });
    const slow = new RedissonClient(slowConnection);
    try {
      const c = await contender();
      if (await slow.getLock('warm').tryLock()) await slow.getLock('warm').unlock();
      proxy.set('down', { latencyMs: MEMBER_REPLY_BOUND_MS + 1_000 }); // replies of the fifth server come 4 s late
      const redLock = c[0]!.getRedLock(...c.slice(0, 4).map((client) => client.getLock(NAME)), slow.getLock(NAME));
      const handle = await redLock.tryAcquire(); // one round of single attempts, bounded by the reply bound
      expect(handle?.held).toBe(4);
      expect(await admins[4]!.exists(NAME)).toBe(1); // the late acquisition landed; its reply is on its way
      await eventually(async () => (await admins[4]!.exists(NAME)) === 0, 10_000, 'the late hold to be given back');
      await handle!.release();
      proxy.heal();
      await eventually(async () => (await liveKeys()).length === 0, 15_000, 'no key (nor latch) on any server');
      expect(slow.diagnostics().leases).toBe(0);
    } finally {
      await slow.shutdown();
      slowConnection.disconnect();
      await proxy.close();
    }
  }, 30_000);

  it('succeeds with two servers stopped', async () => {
    await servers[1]!.kill();
    await servers[3]!.kill();
    const c = await contender();
    const handle = await redLockOf(c).acquire({ waitTime: 5_000 });
    expect(handle.held).toBe(3);
    expect(handle.signal.aborted).toBe(false);
    expect(await liveKeys()).toEqual([NAME, NAME, NAME]);
    await handle.release();
    await nothingLeft();
  });

  it('fails with QuorumError, each member outcome told, with three stopped, and leaves no key on the live ones', async () => {
    await Promise.all([servers[0]!.kill(), servers[2]!.kill(), servers[4]!.kill()]);
    const c = await contender();
    const redLock = redLockOf(c);
    const error: QuorumError = await redLock.acquire({ waitTime: 600 }).then(
      () => Promise.reject(new Error('acquired without a quorum')),
      (e: unknown) => e as QuorumError,
    );
    expect(error).toBeInstanceOf(QuorumError);
    expect(error.code).toBe('ERR_QUORUM');
    expect(error.quorum).toBe(3);
    expect(error.acquired).toBe(2);
    expect(statuses(error.outcomes)).toEqual(['unreachable', 'acquired', 'unreachable', 'acquired', 'unreachable']);
    expect(error.outcomes.map((outcome) => outcome.name)).toEqual(Array(5).fill(NAME));
    expect(await redLock.tryLock()).toBe(false);
    expect(await redLock.tryAcquire()).toBeNull();
    await nothingLeft();
    for (const client of c) expect(client.diagnostics()).toEqual({ channels: 0, waiters: 0, leases: 0 });
  });

  it('tells contention from an outage: held members carry the holder TTL', async () => {
    const holder = await contender();
    const held = await Promise.all([0, 1, 2].map((i) => holder[i]!.getLock(NAME).acquire({ leaseTime: 20_000 })));
    await servers[4]!.kill();
    const c = await contender();
    const error = (await redLockOf(c).acquire({ waitTime: 500 }).catch((e: unknown) => e)) as QuorumError;
    expect(error).toBeInstanceOf(QuorumError);
    expect(statuses(error.outcomes)).toEqual(['held', 'held', 'held', 'acquired', 'unreachable']);
    for (const outcome of error.outcomes.slice(0, 3)) {
      expect(outcome.status === 'held' && outcome.ttl).toBeGreaterThan(15_000);
    }
    await Promise.all(held.map((handle) => handle.release()));
    await nothingLeft();
  });

  it('a timed-out wait and an abort leave no key, subscription or timer on any server', async () => {
    const holder = await contender();
    const held = await redLockOf(holder).acquire({ leaseTime: 20_000 });
    const c = await contender();
    const redLock = redLockOf(c);
    const timers = trackTimers();
    try {
      const started = performance.now();
      const error = (await redLock.acquire({ waitTime: 500 }).catch((e: unknown) => e)) as QuorumError;
      expect(statuses(error.outcomes)).toEqual(Array(5).fill('held'));
      expect(performance.now() - started).toBeLessThan(5_000);
      const controller = new AbortController();
      const waiting = redLock.acquire({ signal: controller.signal });
      await eventually(async () => (await subscriberCount(admins[0]!, lockChannel(NAME))) === 1, 5_000, 'the waiters to subscribe');
      const reason = new Error('caller gave up');
      controller.abort(reason);
      await expect(waiting).rejects.toBe(reason);
      for (const admin of admins) await eventually(async () => (await subscriberCount(admin, lockChannel(NAME))) === 0, 5_000, 'no subscriber');
      expect(await timers.settle()).toBe(0);
      for (const client of c) expect(client.diagnostics()).toEqual({ channels: 0, waiters: 0, leases: 0 });
    } finally {
      timers.stop();
    }
    expect(await liveKeys()).toEqual(Array(5).fill(NAME));
    await held.release();
    await nothingLeft();
  });

  it('the signal aborts below the majority, and when the validity of an explicit lease runs out', async () => {
    const c = await contender({ lockWatchdogTimeout: 900 });
    const handle = await redLockOf(c).acquire();
    await admins[0]!.del(NAME);
    await admins[1]!.del(NAME);
    await delay(1_000);
    expect(handle.signal.aborted).toBe(false); // 3 of 5 still held
    await admins[2]!.del(NAME);
    await eventually(() => handle.signal.aborted, 5_000, 'the signal to abort');
    expect(String(handle.signal.reason.message)).toMatch(/2 of the 3 needed are left/);
    await expect(handle.release()).rejects.toBeInstanceOf(LockNotHeldError);

    const leased = await redLockOf(c).acquire({ leaseTime: 600 });
    const started = performance.now();
    await eventually(() => leased.signal.aborted, 5_000, 'the validity to run out');
    expect(performance.now() - started).toBeLessThan(leased.validity + 500);
    await expect(leased.release()).rejects.toBeInstanceOf(LockNotHeldError);
    await nothingLeft();
  });

  it('rejects bad input before anything is sent', async () => {
    const c = await contender();
    expect(() => c[0]!.getRedLock()).toThrow(InvalidArgumentError);
    const lock = c[0]!.getLock(NAME);
    expect(() => c[0]!.getRedLock(lock, c[1]!.getLock(NAME), lock)).toThrow(/given twice/);
    expect(() => c[0]!.getRedLock(lock, c[1]!.getFairLock(NAME))).toThrow(/mixed kinds|of one kind/);
    expect(() => c[0]!.getRedLock(lock, c[0]!.getMultiLock(c[1]!.getLock(NAME)) as never)).toThrow(/cannot be a member/);
    await expect(redLockOf(c).tryLock({ leaseTime: 0 })).rejects.toThrow(InvalidArgumentError);
    expect(await liveKeys()).toEqual([]);
  });

  it('excludes across three processes while one server is killed and restarted mid-run', async () => {
    const lease = 3_000;
    const urls = servers.map((server) => server.url);
    const workers = ['w1', 'w2', 'w3'].map((worker) =>
      spawn(process.execPath, [WORKER, worker, '30', String(lease), urls[0]!, ...urls], { stdio: ['ignore', 'pipe', 'pipe'] }),
    );
    const events: SectionEvent[] = [];
    const stderr: string[] = [];
    for (const worker of workers) {
      let buffered = '';
      worker.stdout.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        const lines = buffered.split('\n');
        buffered = lines.pop()!;
        for (const line of lines) events.push(JSON.parse(line) as SectionEvent);
      });
      worker.stderr.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
    }
    const exits = Promise.all(workers.map(async (worker) => (await once(worker, 'exit'))[0] as number));
    await eventually(() => events.length >= 20, 60_000, 'the run to get going');
    await servers[2]!.kill();
    // A crashed member stays down longer than the lease (the algorithm's delayed restart), so no
    // lock it held can be re-granted on it while still valid elsewhere.
    await delay(lease + 500);
    await servers[2]!.start();
    const codes = await exits;
    expect(stderr.join('')).toBe(''); // first: a worker's error says more than its exit code
    expect(codes).toEqual([0, 0, 0]);
    const report = checkExclusion(events, Number(await admins[0]!.get('redlock:counter')));
    expect(report.sections).toBe(90);
    expect(report.overlaps).toBe(0);
    expect(report.lostUpdates).toBe(0);
  }, 120_000);
});
