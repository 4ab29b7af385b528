import Redis from 'ioredis';
import type { RedisOptions } from 'ioredis';
import {
  InvalidArgumentError,
  LockAcquireTimeoutError,
  RedisUnavailableError,
  Handle,
  LockLostError,
  LockNotHeldError,
  RedissonClient,
  RLock,
  type RedissonOptions,
} from '../lib';
import { lockChannel } from '../lib/keys';
import { delay } from './helpers/fixture';
import { ChaosProxy } from './helpers/proxy';
import { eventually, subscriberCount } from './helpers/redis-server';
import { startServers, type StoppableRedis } from './helpers/servers';
import { trackTimers } from './helpers/timers';

/** MultiLock over three locks on three independent servers. */
let servers: StoppableRedis[];
let admins: Redis[];
let clients: RedissonClient[] = [];

beforeAll(async () => {
  servers = await startServers(3);
  admins = servers.map((server) => server.connect());
});
beforeEach(async () => {
  await Promise.all(admins.map(async (admin) => (await admin.flushall(), await admin.script('FLUSH'))));
});
afterEach(async () => {
  await Promise.all(clients.map((client) => client.shutdown()));
  clients = [];
});
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

/** One client per server: a contender of its own. */
function contender(options?: RedissonOptions, connection?: RedisOptions): RedissonClient[] {
  return servers.map((server) => {
    const client = new RedissonClient(server.connect(connection), options);
    clients.push(client);
    return client;
  });
}

/** Locks `names[i]` on server i through `of`'s clients. */
const locksOf = (of: RedissonClient[], names = ['multi:a', 'multi:b', 'multi:c']): RLock[] =>
  names.map((name, i) => of[i]!.getLock(name));

/** Keys on every server, per server. */
const keysEverywhere = async (): Promise<string[][]> => Promise.all(admins.map(async (admin) => (await admin.keys('*')).sort()));
/** Waits until the servers hold exactly `expected` (unlock latches go a moment after their unlock). */
const keysBecome = (expected: string[][]) =>
  eventually(async () => JSON.stringify(await keysEverywhere()) === JSON.stringify(expected), 5_000, `keys ${JSON.stringify(expected)}`);
const nothingLeft = () => eventually(async () => (await keysEverywhere()).every((keys) => keys.length === 0), 5_000, 'no key on any server');

describe('MultiLock over three servers', () => {
  it('takes every member, reports held, and releases them all', async () => {
    const c = contender();
    const multi = c[0]!.getMultiLock(...locksOf(c));
    expect(await multi.tryLock()).toBe(true);
    await keysBecome([['multi:a'], ['multi:b'], ['multi:c']]);
    await multi.unlock();
    await nothingLeft();

    const handle = await multi.acquire({ waitTime: 2_000 });
    expect(handle).toBeInstanceOf(Handle);
    expect(handle.name).toBe('MultiLock(multi:a, multi:b, multi:c)');
    expect(handle.signal.aborted).toBe(false);
    await handle.release();
    await handle.release(); // later calls do nothing
    await nothingLeft();
  });

  it('two contenders (and a third over a subset, listed in another order) never hold overlapping members at once', async () => {
    const a = contender();
    const b = contender();
    const c = contender();
    const multis = [
      a[0]!.getMultiLock(...locksOf(a)),
      b[0]!.getMultiLock(...locksOf(b)),
      // Listed in reverse and over two members: the name order still makes every contender take them alike.
      c[0]!.getMultiLock(c[2]!.getLock('multi:c'), c[1]!.getLock('multi:b')),
    ];
    const memberNames = [['multi:a', 'multi:b', 'multi:c'], ['multi:a', 'multi:b', 'multi:c'], ['multi:b', 'multi:c']];
    const held = new Map<string, number>();
    let overlaps = 0;
    let sections = 0;
    await Promise.all(
      multis.map(async (multi, who) => {
        for (let i = 0; i < 15; i++) {
          const handle = await multi.acquire({ waitTime: 20_000 });
          for (const name of memberNames[who]!) {
            if (held.has(name)) overlaps += 1;
            held.set(name, who);
          }
          sections += 1;
          await delay(2);
          for (const name of memberNames[who]!) held.delete(name);
          await handle.release();
        }
      }),
    );
    expect(sections).toBe(45);
    expect(overlaps).toBe(0);
    await nothingLeft();
  });

  it('a member held elsewhere fails the acquisition and leaves the members taken before it free', async () => {
    const holder = contender();
    const c = contender();
    const held = await holder[2]!.getLock('multi:c').acquire({ leaseTime: 20_000 });
    const multi = c[0]!.getMultiLock(...locksOf(c));
    expect(await multi.tryLock()).toBe(false);
    await keysBecome([[], [], ['multi:c']]);
    const started = performance.now();
    await expect(multi.acquire({ waitTime: 400 })).rejects.toBeInstanceOf(LockAcquireTimeoutError);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(await multi.tryAcquire({ waitTime: 200 })).toBeNull();
    await keysBecome([[], [], ['multi:c']]);
    // The first two are free for anyone else at once.
    const other = contender();
    expect(await other[0]!.getLock('multi:a').tryLock()).toBe(true);
    expect(await other[1]!.getLock('multi:b').tryLock()).toBe(true);
    await other[0]!.getLock('multi:a').unlock();
    await other[1]!.getLock('multi:b').unlock();
    // Once the holder lets go, a waiting acquisition gets all three.
    const waiting = multi.acquire({ waitTime: 10_000 });
    await delay(200);
    await held.release();
    const handle = await waiting;
    await handle.release();
    await nothingLeft();
  });

  it('a lost member aborts the combined signal; release then reports it and frees the rest', async () => {
    const c = contender({ lockWatchdogTimeout: 900 });
    const handle = await c[0]!.getMultiLock(...locksOf(c)).acquire();
    const lost = new Promise((resolve) => handle.signal.addEventListener('abort', () => resolve(handle.signal.reason)));
    await admins[1]!.del('multi:b'); // the second server forgets the lock: its renewal finds nothing
    const reason = await lost;
    expect(reason).toBeInstanceOf(LockLostError);
    expect((reason as LockLostError).message).toContain("member 'multi:b' was lost");
    await expect(handle.release()).rejects.toBeInstanceOf(LockNotHeldError);
    await nothingLeft();
  });

  it('an abort while waiting gives back every member taken and leaves no key, subscription or timer', async () => {
    const holder = contender();
    const c = contender();
    const held = await holder[2]!.getLock('multi:c').acquire({ leaseTime: 20_000 });
    const multi = c[0]!.getMultiLock(...locksOf(c));
    const timers = trackTimers();
    try {
      const controller = new AbortController();
      const waiting = multi.acquire({ signal: controller.signal });
      await eventually(async () => (await subscriberCount(admins[2]!, lockChannel('multi:c'))) === 1, 5_000, 'the waiter to subscribe');
      const reason = new Error('caller gave up');
      controller.abort(reason);
      await expect(waiting).rejects.toBe(reason);
      await keysBecome([[], [], ['multi:c']]);
      await eventually(async () => (await subscriberCount(admins[2]!, lockChannel('multi:c'))) === 0, 5_000, 'no subscriber');
      expect(await timers.settle()).toBe(0);
      for (const client of c) expect(client.diagnostics()).toEqual({ channels: 0, waiters: 0, leases: 0 });
      // An already aborted signal sends nothing.
      await expect(multi.lock({ signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    } finally {
      timers.stop();
    }
    await held.release();
    await nothingLeft();
  });

  it('a time-out while a member reply is still in flight undoes that acquisition when it lands', async () => {
    const proxy = await ChaosProxy.start(servers[2]!.port);
    const slowConnection = new Redis(proxy.url, { maxRetriesPerRequest: null });
    const slow = new RedissonClient(slowConnection);
    try {
      const c = contender();
      if (await slow.getLock('warm').tryLock()) await slow.getLock('warm').unlock();
      proxy.set('down', { latencyMs: 800 }); // replies of the third server arrive 800 ms late
      const multi = c[0]!.getMultiLock(c[0]!.getLock('multi:a'), c[1]!.getLock('multi:b'), slow.getLock('multi:c'));
      const timers = trackTimers();
      try {
        const started = performance.now();
        // No reply within the wait and the reply grace: an outage, as far as the caller can tell.
        await expect(multi.acquire({ waitTime: 300 })).rejects.toBeInstanceOf(RedisUnavailableError);
        expect(performance.now() - started).toBeLessThan(3_000);
        // The third acquisition landed on Redis; once its reply comes back it is undone.
        await nothingLeft();
        expect(await timers.settle(3_000)).toBe(0);
      } finally {
        timers.stop();
      }
      proxy.heal();
      for (const client of [...c, slow]) expect(client.diagnostics().leases).toBe(0);
    } finally {
      await slow.shutdown();
      slowConnection.disconnect();
      await proxy.close();
    }
  });

  it('using() runs in an owner scope of every member client: members re-enter inside it', async () => {
    const c = contender();
    const locks = locksOf(c);
    const multi = c[0]!.getMultiLock(locks);
    const result = await multi.using(async (signal) => {
      expect(signal.aborted).toBe(false);
      expect(await multi.isHeldByCurrentThread()).toBe(true);
      await locks[1]!.lock();
      expect(await locks[1]!.getHoldCount()).toBe(2);
      await locks[1]!.unlock();
      return 42;
    });
    expect(result).toBe(42);
    expect(await multi.isHeldByCurrentThread()).toBe(false);
    await nothingLeft();
  });

  it('releases in reverse order of taking, which is the order of names', async () => {
    const c = contender();
    const multi = c[0]!.getMultiLock(c[2]!.getLock('multi:c'), c[0]!.getLock('multi:a'), c[1]!.getLock('multi:b'));
    const released: string[] = [];
    // The members' own events (the MultiLock emits its own too, of kind 'multi-lock').
    for (const client of c) client.on('released', ({ kind, name }) => kind === 'lock' && released.push(name));
    const acquired: string[] = [];
    for (const client of c) client.on('acquired', ({ kind, name }) => kind === 'lock' && acquired.push(name));
    const handle = await multi.acquire();
    await handle.release();
    expect(acquired).toEqual(['multi:a', 'multi:b', 'multi:c']);
    expect(released).toEqual(['multi:c', 'multi:b', 'multi:a']);
  });

  it('rejects bad input before anything is sent', async () => {
    const c = contender();
    const [a, b] = locksOf(c);
    expect(() => c[0]!.getMultiLock()).toThrow(InvalidArgumentError);
    expect(() => c[0]!.getMultiLock([])).toThrow(/at least one lock/);
    expect(() => c[0]!.getMultiLock(a!, b!, a!)).toThrow(/given twice/);
    expect(() => c[0]!.getMultiLock(a!, c[0]!.getLock('multi:a'))).toThrow(/'multi:a' is given twice/);
    const multi = c[0]!.getMultiLock(a!, b!);
    expect(() => c[0]!.getMultiLock(a!, multi as never)).toThrow(/cannot be a member/);
    expect(() => c[0]!.getMultiLock('multi:a' as never)).toThrow(InvalidArgumentError);
    await expect(multi.tryLock({ waitTime: -1 })).rejects.toThrow(InvalidArgumentError);
    await expect(multi.lock({ waitTime: 5 } as never)).rejects.toThrow(/Unknown lock options/);
    await expect(multi.using('x' as never)).rejects.toThrow(InvalidArgumentError);
    await expect(multi.isHeldByThread(0)).rejects.toThrow(InvalidArgumentError);
    // The same name on another server is another lock.
    expect(() => c[0]!.getMultiLock(a!, c[1]!.getLock('multi:a'))).not.toThrow();
    expect(await keysEverywhere()).toEqual([[], [], []]);
  });
});
