import Redis, { type RedisOptions } from 'ioredis';
import { LockLostError, RedisUnavailableError, RedissonClient, SHUTDOWN_BOUND_MS, type RedissonOptions } from '../lib';
import { spawnRedis, stopProcess, type ServerProcess } from './helpers/redis-process';
import { eventually, freePort } from './helpers/redis-server';
import { startServers } from './helpers/servers';

/*
 * Outages (issue 21): with nothing listening, and with a server that accepts connections but never
 * answers (SIGSTOP), every kind's acquire-like call with `waitTime: 1000` settles within
 * `waitTime + replyGrace` (asserted with room for a loaded machine) with `RedisUnavailableError`,
 * the library's connections print no unhandled `error` event, and nothing is held once Redis is back.
 */

const WAIT = 1_000;
/** What each call is asserted to settle within: `WAIT + replyGrace` (250) with room for a loaded 2-core machine. */
const BOUND = 3_000;
const LEASE = 5_000;

/** A user's connection as the README advises: ioredis defaults, and an `error` listener of its own. */
function userConnection(port: number, options: RedisOptions = {}): Redis {
  const redis = new Redis({ host: '127.0.0.1', port, ...options });
  redis.on('error', () => undefined);
  connections.push(redis);
  return redis;
}

let connections: Redis[] = [];
let clients: RedissonClient[] = [];
let servers: ServerProcess[] = [];
let unhandled: string[] = [];
let consoleError: jest.SpyInstance;

beforeEach(() => {
  unhandled = [];
  const original = console.error.bind(console);
  consoleError = jest.spyOn(console, 'error').mockImplementation((...args: unknown[]) => {
    if (String(args[0]).includes('Unhandled error event')) unhandled.push(String(args[1]));
    else original(...args);
  });
});

afterEach(async () => {
  for (const server of servers) server.kill('SIGCONT');
  await Promise.all(clients.map((client) => client.shutdown()));
  for (const redis of connections) redis.disconnect();
  await Promise.all(servers.map((server) => stopProcess(server)));
  clients = [];
  connections = [];
  servers = [];
  consoleError.mockRestore();
});

function client(redis: Redis, options?: RedissonOptions): RedissonClient {
  const redisson = new RedissonClient(redis, options);
  clients.push(redisson);
  return redisson;
}

async function serve(port: number): Promise<ServerProcess> {
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  const server = await spawnRedis(args, port, 20_000);
  servers.push(server);
  return server;
}

/** Every kind's acquire-like call with a wait of {@link WAIT} ms, by name. */
const CALLS: Record<string, (r: RedissonClient) => Promise<unknown>> = {
  lock: (r) => r.getLock('o:lock').tryLock({ waitTime: WAIT, leaseTime: LEASE }),
  'lock acquire': (r) => r.getLock('o:lock2').acquire({ waitTime: WAIT }),
  fair: (r) => r.getFairLock('o:fair').tryLock({ waitTime: WAIT, leaseTime: LEASE }),
  read: (r) => r.getReadWriteLock('o:rw').readLock().tryLock({ waitTime: WAIT, leaseTime: LEASE }),
  write: (r) => r.getReadWriteLock('o:rw2').writeLock().tryLock({ waitTime: WAIT, leaseTime: LEASE }),
  spin: (r) => r.getSpinLock('o:spin').tryLock({ waitTime: WAIT, leaseTime: LEASE }),
  fenced: (r) => r.getFencedLock('o:fenced').tryAcquire({ waitTime: WAIT, leaseTime: LEASE }),
  'non-reentrant': (r) => r.getNonReentrantLock('o:nr').tryLock({ waitTime: WAIT, leaseTime: LEASE }),
  'non-reentrant fair': (r) => r.getNonReentrantFairLock('o:nrf').tryLock({ waitTime: WAIT, leaseTime: LEASE }),
  multi: (r) => r.getMultiLock(r.getLock('o:m1'), r.getLock('o:m2')).tryLock({ waitTime: WAIT, leaseTime: LEASE }),
  semaphore: (r) => r.getSemaphore('o:sem').tryAcquire({ waitTime: WAIT }),
  'expirable semaphore': (r) => r.getPermitExpirableSemaphore('o:psem').tryAcquire({ waitTime: WAIT, leaseTime: LEASE }),
  latch: (r) => r.getCountDownLatch('o:latch').await({ waitTime: WAIT }),
};

/** Lock keys that must hold nothing once Redis is back. */
const LOCK_KEYS = ['o:lock', 'o:lock2', 'o:fair', 'o:rw', 'o:rw2', 'o:spin', 'o:fenced', 'o:nr', 'o:nrf', 'o:m1', 'o:m2'];

interface Settled {
  kind: string;
  ms: number;
  outcome: unknown;
}

/** Runs every call at once; resolves how long each took and what it settled with (capped at 20 s). */
async function settleAll(redisson: RedissonClient): Promise<Settled[]> {
  return Promise.all(
    Object.entries(CALLS).map(async ([kind, call]) => {
      const startedAt = performance.now();
      const cap = new Promise((resolve) => setTimeout(() => resolve('still pending'), 20_000).unref());
      const outcome = await Promise.race([call(redisson).catch((error: unknown) => error), cap]);
      return { kind, ms: Math.round(performance.now() - startedAt), outcome };
    }),
  );
}

function report(what: string, settled: readonly Settled[]): void {
  const lines = settled.map(({ kind, ms, outcome }) => `${kind.padEnd(20)} ${String(ms).padStart(6)} ms  ${describeOutcome(outcome)}`);
  process.stdout.write(`\n${what} (waitTime ${WAIT} ms):\n${lines.join('\n')}\n`);
}

function describeOutcome(outcome: unknown): string {
  if (outcome instanceof Error) return `${outcome.name}${outcome.cause instanceof Error ? ` (cause: ${outcome.cause.message.slice(0, 60)})` : ''}`;
  return String(outcome);
}

function expectBoundedOutage(settled: readonly Settled[]): void {
  for (const { kind, ms, outcome } of settled) {
    expect({ kind, unavailable: outcome instanceof RedisUnavailableError }).toEqual({ kind, unavailable: true });
    expect({ kind, bounded: ms < BOUND }).toEqual({ kind, bounded: true });
  }
}

/** Waits until nothing is held: no lock key, every permit back, the latch as set. */
async function expectNothingHeld(admin: Redis): Promise<void> {
  const held = async (): Promise<string[]> => {
    const locks = (await Promise.all(LOCK_KEYS.map(async (key) => ((await admin.exists(key)) ? key : undefined)))).filter(Boolean);
    const permits = await admin.get('o:sem');
    const expirable = await admin.zcard('redisson__timeout__set:{o:psem}');
    // The permits set up (or none: the semaphore was never created) are all there.
    const semaphore = permits === null || permits === '3' ? [] : [`o:sem=${permits}`];
    return [...(locks as string[]), ...semaphore, ...(expirable === 0 ? [] : [`o:psem holds ${expirable}`])];
  };
  await eventually(async () => (await held()).length === 0, 15_000, 'nothing held').catch(async (error: unknown) => {
    throw new Error(`${String(error)}: ${(await held()).join(', ')}`);
  });
}

async function setUp(admin: Redis): Promise<void> {
  await admin.flushall();
  await admin.set('o:sem', '3');
  await admin.set('o:psem', '3');
  await admin.set('o:latch', '1');
}

describe('outage: every acquire-like call settles within its wait', () => {
  it('with nothing listening: RedisUnavailableError within the bound; nothing held once Redis starts', async () => {
    const port = await freePort();
    const redisson = client(userConnection(port));
    const settled = await settleAll(redisson);
    report('nothing listening', settled);
    expectBoundedOutage(settled);
    expect(unhandled).toEqual([]);
    // Redis comes back: attempts ioredis still had queued land, and are taken back.
    await serve(port);
    const admin = userConnection(port);
    await expectNothingHeld(admin);
    expect(redisson.diagnostics()).toEqual({ channels: 0, waiters: 0, leases: 0 });
    expect(await redisson.getLock('o:lock').tryLock({ waitTime: WAIT, leaseTime: LEASE })).toBe(true);
    expect(unhandled).toEqual([]);
  });

  it('with a server that accepts but never answers (SIGSTOP): the same; nothing held after SIGCONT', async () => {
    const port = await freePort();
    const server = await serve(port);
    const admin = userConnection(port);
    await setUp(admin);
    const redisson = client(userConnection(port));
    // Warm: scripts loaded, the subscriber connected.
    await redisson.getLock('o:warm').using(() => undefined, { waitTime: WAIT });
    await redisson.getCountDownLatch('o:warm-latch').await({ waitTime: 10 });
    const reasons = new Set<string>();
    redisson.on('acquireFailed', ({ reason }) => reasons.add(reason));
    server.kill('SIGSTOP');
    const settled = await settleAll(redisson);
    report('server frozen (SIGSTOP)', settled);
    expectBoundedOutage(settled);
    expect([...reasons]).toEqual(['unavailable']);
    server.kill('SIGCONT');
    await expectNothingHeld(admin);
    expect(await admin.get('o:latch')).toBe('1');
    expect(redisson.diagnostics()).toEqual({ channels: 0, waiters: 0, leases: 0 });
    expect(unhandled).toEqual([]);
  });

  it('a MultiLock holding one member when its server freezes settles within its bound; the member is given back after', async () => {
    const port = await freePort();
    const server = await serve(port);
    const admin = userConnection(port);
    const redisson = client(userConnection(port));
    await client(userConnection(port)).getLock('o:m2').lock({ leaseTime: 30_000 });
    const multi = redisson.getMultiLock(redisson.getLock('o:m1'), redisson.getLock('o:m2'));
    const startedAt = performance.now();
    const outcome = multi.tryLock({ waitTime: WAIT, leaseTime: LEASE }).catch((e: unknown) => e);
    await eventually(() => redisson.diagnostics().waiters === 1, 5_000, 'o:m1 held, waiting for o:m2');
    server.kill('SIGSTOP');
    expect(await outcome).toBeInstanceOf(RedisUnavailableError);
    const ms = performance.now() - startedAt;
    process.stdout.write(`\nMultiLock, its server frozen while it holds a member: ${Math.round(ms)} ms\n`);
    expect(ms).toBeLessThan(BOUND);
    server.kill('SIGCONT');
    await eventually(async () => (await admin.exists('o:m1')) === 0, 5_000, 'o:m1 given back');
  });

  it('tryLock() without waitTime is one attempt bounded by replyGrace', async () => {
    const port = await freePort();
    const server = await serve(port);
    const redisson = client(userConnection(port));
    await redisson.getLock('o:warm').using(() => undefined);
    server.kill('SIGSTOP');
    const startedAt = performance.now();
    const error = await redisson.getLock('o:lock').tryLock().catch((e: unknown) => e);
    const ms = performance.now() - startedAt;
    process.stdout.write(`\ntryLock() on a frozen server: ${Math.round(ms)} ms\n`);
    expect(error).toBeInstanceOf(RedisUnavailableError);
    expect(error).toMatchObject({ code: 'ERR_REDIS_UNAVAILABLE', lockName: 'o:lock', operation: 'acquire', waitTime: 0 });
    expect(ms).toBeLessThan(BOUND - WAIT);
    server.kill('SIGCONT');
    await expectNothingHeld(userConnection(port));
  });

  it('with the offline queue off, a failure in transit is retried within the wait: Redis back in time, the lock is taken', async () => {
    const port = await freePort();
    const redisson = client(userConnection(port, { enableOfflineQueue: false }));
    const logged: string[] = [];
    const watched = client(userConnection(port, { enableOfflineQueue: false }), { logger: { debug: (m) => logged.push(m) } });
    const startedAt = performance.now();
    const error = await redisson.getLock('o:lock').tryLock({ waitTime: WAIT }).catch((e: unknown) => e);
    expect(performance.now() - startedAt).toBeLessThan(BOUND);
    expect(error).toBeInstanceOf(RedisUnavailableError);
    expect((error as Error).cause).toBeInstanceOf(Error);
    expect(String(((error as Error).cause as Error).message)).toMatch(/enableOfflineQueue/);
    const taking = watched.getLock('o:lock').tryLock({ waitTime: 10_000, leaseTime: LEASE });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await serve(port);
    expect(await taking).toBe(true);
    expect(logged.some((m) => m.includes('failed in transit'))).toBe(true);
  });

  it('a call without waitTime honours its signal while Redis does not answer', async () => {
    const port = await freePort();
    const redisson = client(userConnection(port));
    const signal = AbortSignal.timeout(500);
    const startedAt = performance.now();
    const error = await redisson.getLock('o:lock').lock({ signal }).catch((e: unknown) => e);
    expect(performance.now() - startedAt).toBeLessThan(BOUND);
    expect(error).toBe(signal.reason);
    const latch = await redisson.getCountDownLatch('o:latch').await({ signal: AbortSignal.timeout(500) }).catch((e: unknown) => e);
    expect(latch).toBeInstanceOf(DOMException);
  });
});

describe('outage: release, lease and shutdown', () => {
  it('release() on a frozen server rejects with RedisUnavailableError by the end of the lease, and the signal aborts', async () => {
    const port = await freePort();
    const server = await serve(port);
    const admin = userConnection(port);
    const redisson = client(userConnection(port));
    const handle = await redisson.getLock('o:lock').acquire({ leaseTime: 1_500 });
    server.kill('SIGSTOP');
    const startedAt = performance.now();
    const error = await handle.release().catch((e: unknown) => e);
    const ms = performance.now() - startedAt;
    process.stdout.write(`\nrelease() on a frozen server: ${Math.round(ms)} ms\n`);
    expect(error).toBeInstanceOf(RedisUnavailableError);
    expect(error).toMatchObject({ operation: 'release' });
    expect(ms).toBeLessThan(1_500 + BOUND - WAIT);
    await eventually(() => handle.signal.aborted, 2_000, 'the handle signal');
    expect(handle.signal.reason).toBeInstanceOf(LockLostError);
    server.kill('SIGCONT');
    await eventually(async () => (await admin.exists('o:lock')) === 0, 5_000, 'the lock gone');
    expect(redisson.diagnostics().leases).toBe(0);
  });

  it('release() with nothing listening and the offline queue off rejects at once; the hold stays counted, releasable again', async () => {
    const port = await freePort();
    const server = await serve(port);
    const redis = userConnection(port, { enableOfflineQueue: false });
    const redisson = client(redis);
    const handle = await redisson.getLock('o:lock').acquire({ leaseTime: 30_000 });
    await stopProcess(server, 'SIGKILL');
    servers = [];
    await eventually(() => redis.status !== 'ready', 2_000, 'the connection down');
    const error = await handle.release().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedisUnavailableError);
    expect(handle.released).toBe(false); // may be called again
    expect(redisson.diagnostics().leases).toBe(1); // still counted, no longer renewed
  });

  it('shutdown() returns within its bound with the server frozen and waiters parked', async () => {
    const port = await freePort();
    const server = await serve(port);
    const redisson = client(userConnection(port));
    const holder = await redisson.getLock('o:lock').acquire({ leaseTime: 30_000 });
    const waiting = redisson.getLock('o:lock').tryLock({ waitTime: 30_000 }).catch((e: unknown) => e);
    await eventually(() => redisson.diagnostics().waiters === 1, 5_000, 'a parked waiter');
    await holder.release(); // an unlock latch queued for deletion
    server.kill('SIGSTOP');
    const startedAt = performance.now();
    await redisson.shutdown();
    const ms = performance.now() - startedAt;
    process.stdout.write(`\nshutdown() on a frozen server: ${Math.round(ms)} ms\n`);
    expect(ms).toBeLessThan(SHUTDOWN_BOUND_MS + 1_500);
    await waiting;
  });
});

describe('outage: the library\'s own connections', () => {
  it('the subscriber of a client whose server was killed reports its errors through the logger, never unhandled', async () => {
    const port = await freePort();
    const server = await serve(port);
    const logged: string[] = [];
    const redisson = client(userConnection(port), { logger: { debug: (message) => logged.push(message) } });
    await redisson.getLock('o:lock').acquire({ leaseTime: 30_000 });
    const waiting = redisson.getLock('o:lock').tryLock({ waitTime: 30_000, signal: AbortSignal.timeout(3_000) }).catch((e: unknown) => e);
    await eventually(() => redisson.diagnostics().waiters === 1, 5_000, 'a parked waiter (the subscriber connected)');
    await stopProcess(server, 'SIGKILL');
    servers = [];
    await eventually(() => logged.some((m) => m.includes('subscriber connection failed')), 5_000, 'a subscriber error logged');
    expect(await waiting).toBeInstanceOf(DOMException); // its signal: it waited through the outage
    expect(unhandled).toEqual([]);
  });
});

describe('outage: RedLock with a minority of its servers down', () => {
  it('answers a 2 s tryLock within its bound, and true', async () => {
    const five = await startServers(5);
    try {
      const members = five.map((server) => client(userConnection(server.port)));
      await Promise.all(members.map((member) => member.getLock('warm').using(() => undefined)));
      await five[0]!.kill();
      await five[3]!.kill();
      const redLock = members[0]!.getRedLock(members.map((member) => member.getLock('o:red')));
      const startedAt = performance.now();
      const taken = await redLock.tryLock({ waitTime: 2_000, leaseTime: 10_000 });
      const ms = performance.now() - startedAt;
      process.stdout.write(`\nRedLock 3 of 5 up, tryLock waitTime 2000: ${Math.round(ms)} ms, ${String(taken)}\n`);
      expect(taken).toBe(true);
      expect(ms).toBeLessThan(2_000 + BOUND - WAIT);
      await redLock.unlock();
      expect(unhandled).toEqual([]);
    } finally {
      await Promise.all(five.map((server) => server.close()));
    }
  });
});
