import type { RedissonClient } from '../../lib';
import { delay } from '../helpers/fixture';
import { eventually, subscriberCount } from '../helpers/redis-server';
import { JavaLock } from './helpers/java-lock';
import { describeInterop } from './helpers/java-tools';
import { useInterop } from './helpers/use-interop';

/** The holder's lease: a waiter that only re-checked when it ran out would take about this long. */
const LEASE = 30_000;
/** A wake-up by message must come well under the lease, even on a loaded 2-core machine. */
const WAKE_BOUND = 5_000;
const READERS = 3;

// Redisson's names, written out: the test does not borrow ioredisson's key derivation.
const channelOf = (name: string): string => `redisson_rwlock:{${name}}`;
const timeoutKeyOf = (name: string, reader: string, hold: number): string => `{${name}}:${reader}:rwlock_timeout:${hold}`;

type Side = 'java' | 'node';
const other = (side: Side): Side => (side === 'java' ? 'node' : 'java');

/** One side's view of a read/write lock, for one owner: a Java thread, or a Node client's thread 1. */
interface Party {
  owner: string;
  readLock: (leaseMs?: number) => Promise<unknown>;
  tryRead: (waitMs: number, leaseMs?: number) => Promise<boolean>;
  readUnlock: () => Promise<unknown>;
  writeLock: (leaseMs?: number) => Promise<unknown>;
  tryWrite: (waitMs: number) => Promise<boolean>;
  writeUnlock: () => Promise<unknown>;
}

describeInterop('interop: read/write lock (RReadWriteLock) across Java and Node', () => {
  const { admin, client, peer, javaLock } = useInterop();

  async function javaParty(name: string): Promise<Party> {
    const read = javaLock(name, 'readLock');
    // The same Java thread: its writer token is its reader token plus ':write'.
    const write = new JavaLock(peer(), name, read.thread, 'writeLock');
    const owner = `${peer().clientId}:${await peer().threadId(read.thread)}`;
    return {
      owner,
      readLock: (leaseMs = LEASE) => read.lock(leaseMs),
      tryRead: (waitMs, leaseMs = LEASE) => read.tryLock(waitMs, leaseMs),
      readUnlock: () => read.unlock(),
      writeLock: (leaseMs = LEASE) => write.lock(leaseMs),
      tryWrite: (waitMs) => write.tryLock(waitMs, LEASE),
      writeUnlock: () => write.unlock(),
    };
  }

  function nodeParty(name: string, redisson: RedissonClient = client(), threadId = 1): Party {
    const rw = redisson.getReadWriteLock(name);
    return {
      owner: `${redisson.id}:${threadId}`,
      readLock: (leaseTime = LEASE) => rw.readLock().lock({ threadId, leaseTime }),
      tryRead: (waitTime, leaseTime = LEASE) => rw.readLock().tryLock({ threadId, waitTime, leaseTime }),
      readUnlock: () => rw.readLock().unlock({ threadId }),
      writeLock: (leaseTime = LEASE) => rw.writeLock().lock({ threadId, leaseTime }),
      tryWrite: (waitTime) => rw.writeLock().tryLock({ threadId, waitTime, leaseTime: LEASE }),
      writeUnlock: () => rw.writeLock().unlock({ threadId }),
    };
  }

  const party = (side: Side, name: string): Promise<Party> => (side === 'java' ? javaParty(name) : Promise.resolve(nodeParty(name)));

  it.each(['java', 'node'] as const)('a %s reader and a reader of the other side share the lock', async (first) => {
    const name = `rw:share:${first}`;
    const a = await party(first, name);
    const b = await party(other(first), name);
    await a.readLock();
    expect(await b.tryRead(0)).toBe(true);

    expect(await admin().hgetall(name)).toEqual({ mode: 'read', [a.owner]: '1', [b.owner]: '1' });
    for (const { owner } of [a, b]) expect(await admin().pttl(timeoutKeyOf(name, owner, 1))).toBeGreaterThan(LEASE - 10_000);
    // Neither side may write while both read.
    expect(await a.tryWrite(0)).toBe(false);
    expect(await b.tryWrite(0)).toBe(false);

    await a.readUnlock();
    expect(await admin().hgetall(name)).toEqual({ mode: 'read', [b.owner]: '1' });
    await b.readUnlock();
    expect(await admin().exists(name)).toBe(0);
    expect(await admin().keys('*rwlock_timeout*')).toEqual([]);
  });

  it.each(['java', 'node'] as const)('a %s writer excludes readers and writers of the other side', async (writerSide) => {
    const name = `rw:exclude:${writerSide}`;
    const writer = await party(writerSide, name);
    const others = await party(other(writerSide), name);
    await writer.writeLock();
    expect(await admin().hgetall(name)).toEqual({ mode: 'write', [`${writer.owner}:write`]: '1' });

    expect(await others.tryRead(300)).toBe(false);
    expect(await others.tryWrite(300)).toBe(false);
    expect(await admin().hgetall(name)).toEqual({ mode: 'write', [`${writer.owner}:write`]: '1' });

    await writer.writeUnlock();
    expect(await others.tryRead(0)).toBe(true);
    // And now the reader keeps the first side's writer out.
    expect(await writer.tryWrite(300)).toBe(false);
    await others.readUnlock();
    expect(await admin().exists(name)).toBe(0);
  });

  it.each(['java', 'node'] as const)('a %s write unlock wakes every waiting reader of the other side at once with 1', async (writerSide) => {
    const name = `rw:wake-all:${writerSide}`;
    const listener = admin().duplicate();
    const messages: string[] = [];
    try {
      await listener.subscribe(channelOf(name));
      listener.on('message', (_channel: string, message: string) => messages.push(message));
      const writer = await party(writerSide, name);
      await writer.writeLock();

      let readers: Party[];
      let waiting: Promise<boolean>[];
      if (writerSide === 'java') {
        const redisson = client();
        readers = Array.from({ length: READERS }, (_, i) => nodeParty(name, redisson, i + 1));
        waiting = readers.map((reader) => reader.readLock().then(() => true));
        await eventually(() => redisson.diagnostics().waiters === READERS, 10_000, 'the Node readers to park');
      } else {
        readers = await Promise.all(Array.from({ length: READERS }, () => javaParty(name)));
        waiting = readers.map((reader) => reader.tryRead(25_000));
      }
      // One subscription per client (the listener's aside), however many readers wait in it.
      await eventually(async () => (await subscriberCount(admin(), channelOf(name))) === 2, 10_000, 'the readers\' subscription');
      await delay(200);
      expect(await admin().hgetall(name)).toEqual({ mode: 'write', [`${writer.owner}:write`]: '1' });
      expect(await admin().pttl(name)).toBeGreaterThan(LEASE - 10_000);

      const unlockedAt = performance.now();
      await writer.writeUnlock();
      expect(await Promise.all(waiting)).toEqual(Array(READERS).fill(true));
      expect(performance.now() - unlockedAt).toBeLessThan(WAKE_BOUND);

      // All of them hold at once.
      expect(await admin().hgetall(name)).toEqual({ mode: 'read', ...Object.fromEntries(readers.map(({ owner }) => [owner, '1'])) });
      expect(messages[0]).toBe('1');
      for (const reader of readers) await reader.readUnlock();
      expect(await admin().exists(name)).toBe(0);
    } finally {
      listener.disconnect();
    }
  });

  it.each(['java', 'node'] as const)(
    'a %s read unlock keeps the lock alive for the longer-leased reader of the other side',
    async (shortSide) => {
      // Read unlock recomputes the hash's TTL from every reader's timeout keys: the other side's keys
      // must have the very names this side's script looks for, or it would delete the lock.
      const name = `rw:ttl:${shortSide}`;
      const long = await party(other(shortSide), name);
      const short = await party(shortSide, name);
      await long.readLock(LEASE);
      await short.readLock(3_000);
      await short.readLock(3_000);
      await short.readUnlock();
      await short.readUnlock();

      expect(await admin().hgetall(name)).toEqual({ mode: 'read', [long.owner]: '1' });
      expect(await admin().pttl(name)).toBeGreaterThan(LEASE - 10_000);
      expect(await admin().exists(timeoutKeyOf(name, short.owner, 1), timeoutKeyOf(name, short.owner, 2))).toBe(0);
      // Still read-locked for the short side's writer.
      expect(await short.tryWrite(0)).toBe(false);
      await long.readUnlock();
      expect(await admin().exists(name)).toBe(0);
    },
  );

  it('both sides write the same fields and timeout keys through write, downgrade and release', async () => {
    /** Each step's hash and keys, with the owner written as <owner>. */
    async function shapes(side: Side): Promise<Array<{ hash: Record<string, string>; keys: string[] }>> {
      const name = `rw:shape`;
      await admin().flushall();
      const p = await party(side, name);
      const seen: Array<{ hash: Record<string, string>; keys: string[] }> = [];
      const snapshot = async (): Promise<void> => {
        const hash = Object.fromEntries(Object.entries(await admin().hgetall(name)).map(([field, value]) => [field.replace(p.owner, '<owner>'), value]));
        const keys = (await admin().keys('*rwlock_timeout*')).map((key) => key.replace(p.owner, '<owner>')).sort();
        seen.push({ hash, keys });
      };
      await p.writeLock();
      await snapshot();
      await p.readLock();
      await p.readLock();
      await snapshot();
      await p.writeUnlock();
      await snapshot();
      await p.readUnlock();
      await snapshot();
      await p.readUnlock();
      await snapshot();
      return seen;
    }
    const java = await shapes('java');
    const node = await shapes('node');
    expect(node).toEqual(java);
    expect(java).toEqual([
      { hash: { mode: 'write', '<owner>:write': '1' }, keys: [] },
      {
        hash: { mode: 'write', '<owner>:write': '1', '<owner>': '2' },
        keys: ['{rw:shape}:<owner>:rwlock_timeout:1', '{rw:shape}:<owner>:rwlock_timeout:2'],
      },
      { hash: { mode: 'read', '<owner>': '2' }, keys: ['{rw:shape}:<owner>:rwlock_timeout:1', '{rw:shape}:<owner>:rwlock_timeout:2'] },
      { hash: { mode: 'read', '<owner>': '1' }, keys: ['{rw:shape}:<owner>:rwlock_timeout:1'] },
      { hash: {}, keys: [] },
    ]);
  });
});
