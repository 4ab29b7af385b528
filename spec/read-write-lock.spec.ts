import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { LockNotHeldError, type RedissonClient } from '../lib';
import { delay, useRedis } from './helpers/fixture';
import { eventually, subscriberCount } from './helpers/redis-server';

const { admin, client, server } = useRedis();
const WORKER = join(__dirname, 'contract', 'fixtures', 'lock-worker.mjs');
const READ_HOLDER = join(__dirname, 'fixtures', 'read-holder.mjs');

const rw = (redisson: RedissonClient, name: string) => redisson.getReadWriteLock(name);
/** Keys now, without the unlock latches the reaper deletes a moment after each unlock. */
const keys = async (pattern = '*') => (await admin().keys(pattern)).filter((k) => !k.startsWith('redisson_unlock_latch:')).sort();

/** Collects what is published on `channel`, on a connection of its own. */
async function listen(channel: string) {
  const subscriber = server().connect();
  const messages: string[] = [];
  subscriber.on('message', (_channel: string, message: string) => messages.push(message));
  await subscriber.subscribe(channel);
  return { messages, close: () => subscriber.disconnect() };
}

describe('RReadWriteLock', () => {
  it('readers of different clients share the lock, each counted in its own field', async () => {
    const clients = [client(), client(), client()];
    const handles = await Promise.all(clients.map((c) => rw(c, 'rw:share').readLock().acquire({ waitTime: 0 })));
    const hash = await admin().hgetall('rw:share');
    expect(hash).toEqual({
      mode: 'read',
      ...Object.fromEntries(clients.map((c, i) => [`${c.id}:${handles[i]!.threadId}`, '1'])),
    });
    for (const handle of handles) await handle.release();
    await eventually(async () => (await keys()).length === 0, 5_000, 'nothing left');
  });

  it('bare unlock() outside any scope releases each of one client\'s readers, newest first', async () => {
    const redisson = client();
    const read = rw(redisson, 'rw:bare').readLock();
    await read.lock();
    await read.lock(); // outside any scope: a second owner of its own, sharing the read lock
    const owners = Object.keys(await admin().hgetall('rw:bare')).filter((field) => field !== 'mode');
    expect(owners).toHaveLength(2);
    await read.unlock();
    await read.unlock(); // the first reader: still held, and still this client's to release
    await expect(read.unlock()).rejects.toBeInstanceOf(LockNotHeldError);
    expect(await admin().exists('rw:bare')).toBe(0);
  });

  it('a writer excludes readers and writers of other owners, and readers exclude writers', async () => {
    const a = client();
    const b = client();
    const write = await rw(a, 'rw:excl').writeLock().acquire();
    expect(await rw(b, 'rw:excl').readLock().tryLock()).toBe(false);
    expect(await rw(b, 'rw:excl').writeLock().tryLock()).toBe(false);
    expect(await rw(a, 'rw:excl').readLock().tryLock()).toBe(false); // another owner of the same client
    expect(await rw(b, 'rw:excl').writeLock().isLocked()).toBe(true);
    expect(await rw(b, 'rw:excl').readLock().isLocked()).toBe(false);
    await write.release();
    const read = await rw(b, 'rw:excl').readLock().acquire();
    expect(await rw(a, 'rw:excl').writeLock().tryLock({ waitTime: 100 })).toBe(false);
    expect(await rw(a, 'rw:excl').readLock().isLocked()).toBe(true);
    expect(await rw(a, 'rw:excl').writeLock().isLocked()).toBe(false);
    await read.release();
  });

  it('a writer waiting behind readers gets the lock as soon as the last reader leaves', async () => {
    const readers = [client(), client()];
    const writer = client();
    const holds = await Promise.all(readers.map((c) => rw(c, 'rw:behind').readLock().acquire()));
    const waiting = rw(writer, 'rw:behind').writeLock().acquire({ waitTime: 25_000 });
    let got = false;
    void waiting.then(() => (got = true), () => undefined); // a rejection surfaces at `await waiting`
    await eventually(() => writer.diagnostics().waiters === 1, 10_000, 'the writer to park');
    await holds[0]!.release();
    await delay(300);
    expect(got).toBe(false); // one reader still holds it
    const releasedAt = performance.now();
    await holds[1]!.release();
    const handle = await waiting;
    // The readers' leases are 30 s: only the read-unlock message can wake the writer this soon.
    expect(performance.now() - releasedAt).toBeLessThan(10_000);
    expect(await admin().hget('rw:behind', 'mode')).toBe('write');
    await handle.release();
  });

  it('reader preference: a new reader gets in while a writer waits', async () => {
    const a = client();
    const b = client();
    const first = await rw(a, 'rw:pref').readLock().acquire();
    const writer = rw(b, 'rw:pref').writeLock().acquire({ waitTime: 25_000 });
    await eventually(() => b.diagnostics().waiters === 1, 10_000, 'the writer to park');
    // Of the same client as the waiting writer, too: a reader does not queue behind it.
    const second = await rw(b, 'rw:pref').readLock().tryAcquire({ waitTime: 5_000 });
    expect(second).not.toBeNull();
    await first.release();
    await second!.release();
    await (await writer).release();
  });

  it('a write unlock wakes every waiting reader at once, by its message `1`', async () => {
    const writer = client();
    const readerClients = [client(), client()];
    const channel = 'redisson_rwlock:{rw:wake-all}';
    const heard = await listen(channel);
    try {
      const held = await rw(writer, 'rw:wake-all').writeLock().acquire({ leaseTime: 30_000 });
      // Two waiting readers in each of two clients.
      const waiting = readerClients.flatMap((c) => [1, 2].map(() => rw(c, 'rw:wake-all').readLock().acquire({ waitTime: 25_000 })));
      await eventually(
        () => readerClients.every((c) => c.diagnostics().waiters === 2),
        10_000,
        'four parked readers',
      );
      expect(await subscriberCount(admin(), channel)).toBe(3); // two clients and the listener
      const releasedAt = performance.now();
      await held.release();
      const handles = await Promise.all(waiting);
      // Far below the 30 s lease the readers were told to wait for.
      expect(performance.now() - releasedAt).toBeLessThan(10_000);
      const hash = await admin().hgetall('rw:wake-all');
      expect(hash.mode).toBe('read');
      expect(Object.keys(hash)).toHaveLength(5); // mode + four readers holding at once
      for (const handle of handles) await handle.release();
      await eventually(() => heard.messages.length === 2, 5_000, 'two messages');
      expect(heard.messages).toEqual(['1', '0']); // write unlock, then the last read unlock
    } finally {
      heard.close();
    }
  });

  it('write -> read downgrade in one owner scope; no upgrade', async () => {
    const redisson = client();
    const other = client();
    const lock = rw(redisson, 'rw:down');
    const heard = await listen('redisson_rwlock:{rw:down}');
    try {
      await redisson.run(async () => {
        await lock.writeLock().lock();
        expect(await lock.readLock().tryLock()).toBe(true); // the writer's own thread may read
        expect(await lock.readLock().isLocked()).toBe(true);
        await lock.writeLock().unlock();
        const hash = await admin().hgetall('rw:down');
        expect(hash.mode).toBe('read');
        const readers = Object.keys(hash).filter((field) => field !== 'mode');
        expect(readers).toHaveLength(1); // the write field went, the same thread's read hold stays
        expect(readers[0]).toMatch(new RegExp(`^${redisson.id}:\\d+$`));
        expect(hash[readers[0]!]).toBe('1');
        // Now an ordinary read lock: shared with other readers, excludes writers.
        expect(await rw(other, 'rw:down').readLock().tryLock()).toBe(true);
        await rw(other, 'rw:down').readLock().unlock();
        expect(await rw(other, 'rw:down').writeLock().tryLock()).toBe(false);
        // A reader cannot upgrade, even its own thread.
        expect(await lock.writeLock().tryLock({ waitTime: 100 })).toBe(false);
        await lock.readLock().unlock();
      });
      expect(await admin().exists('rw:down')).toBe(0);
      await delay(100);
      // The downgrading write unlock published nothing (Redisson's behaviour), nor did the other
      // reader's unlock (the lock stayed held): only the last read unlock, which freed it.
      expect(heard.messages).toEqual(['0']);
    } finally {
      heard.close();
    }
  });

  it('a reader whose client shut down stops counting once its timeout key expires; renewal keeps only its own readers', async () => {
    const dead = client({ lockWatchdogTimeout: 600 });
    const live = client({ lockWatchdogTimeout: 600 });
    const deadHold = await rw(dead, 'rw:zombie').readLock().acquire();
    const liveHold = await rw(live, 'rw:zombie').readLock().acquire();
    const deadKey = `{rw:zombie}:${dead.id}:${deadHold.threadId}:rwlock_timeout:1`;
    const liveKey = `{rw:zombie}:${live.id}:${liveHold.threadId}:rwlock_timeout:1`;
    await dead.shutdown(); // its renewal stops; nothing is released
    await delay(1_800); // three leases of 600 ms
    // The live client kept the hash and its own timeout key alive, not the dead reader's.
    expect(await admin().exists(deadKey)).toBe(0);
    expect(await admin().pttl(liveKey)).toBeGreaterThan(0);
    expect(await admin().hexists('rw:zombie', `${dead.id}:${deadHold.threadId}`)).toBe(1);
    expect(liveHold.signal.aborted).toBe(false);
    // The dead reader does not count: the last live reader's unlock frees the lock.
    await liveHold.release();
    expect(await keys()).toEqual([]);
    expect(await rw(live, 'rw:zombie').writeLock().tryLock()).toBe(true);
    await rw(live, 'rw:zombie').writeLock().unlock();
  });

  it('a reader killed with SIGKILL stops counting: a writer gets in once its lease runs out', async () => {
    const child = spawn(process.execPath, [READ_HOLDER, server().url, 'rw:killed', '600'], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
      const held = JSON.parse(line) as { clientId: string; threadId: number };
      await delay(1_000); // it renews meanwhile
      expect(await admin().hget('rw:killed', `${held.clientId}:${held.threadId}`)).toBe('1');
      const writer = client();
      child.kill('SIGKILL');
      const startedAt = performance.now();
      const handle = await rw(writer, 'rw:killed').writeLock().acquire({ waitTime: 20_000 });
      // Bounded by the dead reader's 600 ms lease (the waiter re-checks at the TTL), generously.
      expect(performance.now() - startedAt).toBeLessThan(10_000);
      expect(await keys(`{rw:killed}:*`)).toEqual([]);
      await handle.release();
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('stores keys, fields, TTLs and channel exactly as Redisson does (names with and without braces)', async () => {
    const redisson = client();
    const id = redisson.id;
    for (const [name, prefix, channel] of [
      ['order:42', '{order:42}', 'redisson_rwlock:{order:42}'],
      ['{t1}:job', '{t1}:job', 'redisson_rwlock:{t1}:job'],
    ] as const) {
      const lock = rw(redisson, name);
      await lock.readLock().lock({ threadId: 7, leaseTime: 20_000 });
      await lock.readLock().lock({ threadId: 7, leaseTime: 5_000 });
      expect(await admin().hgetall(name)).toEqual({ mode: 'read', [`${id}:7`]: '2' });
      const first = await admin().pttl(`${prefix}:${id}:7:rwlock_timeout:1`);
      const second = await admin().pttl(`${prefix}:${id}:7:rwlock_timeout:2`);
      expect(await admin().get(`${prefix}:${id}:7:rwlock_timeout:1`)).toBe('1');
      expect(first).toBeGreaterThan(15_000);
      expect(second).toBeLessThanOrEqual(5_000);
      expect(await admin().pttl(name)).toBeGreaterThan(15_000); // the longest read lease
      // A waiting writer subscribes to the shared channel.
      const waiting = rw(client(), name).writeLock().tryLock({ waitTime: 20_000 });
      await eventually(async () => (await subscriberCount(admin(), channel)) === 1, 10_000, `a subscriber on ${channel}`);
      await lock.readLock().unlock({ threadId: 7 }); // LIFO: hold 2 and its key go
      expect(await admin().exists(`${prefix}:${id}:7:rwlock_timeout:2`)).toBe(0);
      expect(await admin().pttl(name)).toBeGreaterThan(15_000);
      await lock.readLock().unlock({ threadId: 7 });
      expect(await waiting).toBe(true);
      const writer = Object.keys(await admin().hgetall(name)).filter((f) => f !== 'mode');
      expect(writer).toHaveLength(1);
      expect(writer[0]).toMatch(/^[0-9a-f-]{36}:\d+:write$/);
      expect(await admin().hget(name, 'mode')).toBe('write');
      await admin().del(name);
    }
    // A write re-entry adds its lease to the time left.
    const write = rw(redisson, 'rw:reenter').writeLock();
    await write.lock({ threadId: 3, leaseTime: 10_000 });
    await write.lock({ threadId: 3, leaseTime: 10_000 });
    expect(await admin().hgetall('rw:reenter')).toEqual({ mode: 'write', [`${id}:3:write`]: '2' });
    expect(await admin().pttl('rw:reenter')).toBeGreaterThan(15_000);
    await write.unlock({ threadId: 3 });
    await write.unlock({ threadId: 3 });
    await expect(write.unlock({ threadId: 3 })).rejects.toBeInstanceOf(LockNotHeldError);
    await eventually(async () => (await admin().keys('*')).length === 0, 5_000, 'nothing left, latches included');
  });

  it('8 reader processes and 1 writer process: no update lost, no reader sees the counter move', async () => {
    const roles = [
      ...Array.from({ length: 8 }, () => ['getReadWriteLock.readLock', 'observe']),
      ['getReadWriteLock.writeLock', 'increment'],
    ];
    const workers = roles.map(([factory, mode]) =>
      spawn(process.execPath, [WORKER, server().url, '40', factory!, 'rw:counter-lock', 'rw:counter', mode!], {
        stdio: ['ignore', 'ignore', 'pipe'],
      }),
    );
    const stderr: string[] = [];
    for (const worker of workers) worker.stderr.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
    const codes = await Promise.all(workers.map(async (worker) => (await once(worker, 'exit'))[0] as number));
    expect(stderr.join('')).toBe('');
    expect(codes).toEqual(roles.map(() => 0));
    expect(await admin().get('rw:counter')).toBe('40');
    await eventually(async () => (await admin().keys('*')).join() === 'rw:counter', 5_000, 'nothing but the counter left');
  }, 120_000);
});

