import { delay } from '../helpers/fixture';
import { eventually } from '../helpers/redis-server';
import { describeInterop } from './helpers/java-tools';
import { useInterop } from './helpers/use-interop';
import type { JavaLockKind } from './helpers/java-lock';

/** The kinds tried both ways: Redisson's RLock and one whose key is another object's (the read/write lock's). */
const KINDS: [JavaLockKind, string][] = [
  ['lock', 'getLock'],
  ['writeLock', 'getReadWriteLock(...).writeLock'],
];

describeInterop('interop: lock listeners (RObservable)', () => {
  const { admin, client, javaLock } = useInterop();

  beforeAll(() => admin().config('SET', 'notify-keyspace-events', 'Egx'));

  it.each(KINDS)('a Node listener hears a Java %s expire and be deleted (unlock, forceUnlock)', async (kind) => {
    const name = `listened:java-made:${kind}`;
    const redisson = client();
    const lock = kind === 'lock' ? redisson.getLock(name) : redisson.getReadWriteLock(name).writeLock();
    const heard: string[] = [];
    const id = await lock.addListener({
      onExpired: (n) => heard.push(`expired:${n}`),
      onDeleted: (n) => heard.push(`deleted:${n}`),
    });

    const java = javaLock(name, kind);
    await java.lock(150);
    await eventually(() => heard.length === 1, 10_000, 'the expiry');
    await java.lock();
    await java.unlock();
    await eventually(() => heard.length === 2, 10_000, 'the deletion by unlock');
    await java.lock(60_000);
    expect(await javaLock(name, kind).forceUnlock()).toBe(true);
    await eventually(() => heard.length === 3, 10_000, 'the deletion by forceUnlock');
    expect(heard).toEqual([`expired:${name}`, `deleted:${name}`, `deleted:${name}`]);

    await lock.removeListener(id);
    await java.lock();
    await java.unlock();
    await delay(300);
    expect(heard).toHaveLength(3);
  });

  it.each(KINDS)('a Java listener on a %s hears Node expire and delete it; removeListener stops it', async (kind) => {
    const name = `listened:node-made:${kind}`;
    const java = javaLock(name, kind);
    await java.heard(); // forget what earlier tests' listeners heard
    const expiredId = await java.addListener('expired');
    const deletedId = await java.addListener('deleted');
    const redisson = client();
    const lock = kind === 'lock' ? redisson.getLock(name) : redisson.getReadWriteLock(name).writeLock();
    const heard: string[] = [];
    /** Whether Java heard `count` events so far. */
    const javaHeard = async (count: number): Promise<boolean> => {
      heard.push(...(await java.heard()));
      return heard.length >= count;
    };

    await lock.lock({ leaseTime: 150, threadId: 1 });
    await eventually(() => javaHeard(1), 10_000, 'the expiry in Java');
    await lock.lock({ threadId: 2 });
    await lock.unlock({ threadId: 2 });
    await eventually(() => javaHeard(2), 10_000, 'the deletion in Java');
    expect(heard).toEqual([`expired:${name}`, `deleted:${name}`]);

    await java.removeListener(expiredId);
    await java.removeListener(deletedId);
    await lock.lock({ leaseTime: 100, threadId: 3 });
    await eventually(async () => (await lock.isLocked()) === false, 10_000, 'the expiry');
    await lock.lock({ threadId: 4 });
    await lock.unlock({ threadId: 4 });
    await delay(300);
    expect(await java.heard()).toEqual([]);
  });
});
