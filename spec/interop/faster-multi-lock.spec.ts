import { valueField } from '../../lib/kinds/faster-multi-lock';
import { delay } from '../helpers/fixture';
import { eventually, subscriberCount } from '../helpers/redis-server';
import { describeInterop } from './helpers/java-tools';
import { useInterop } from './helpers/use-interop';

/** Both sides renew every third of this. */
const WATCHDOG = 2_000;
/** An explicit lease no waiter may wait out within the tests' bounds: only a message wakes it in time. */
const LEASE = 30_000;
/** A wake-up by message must come well under the lease, even on a loaded machine. */
const WAKE_BOUND = 5_000;

const channelOf = (group: string): string => `redisson_lock__channel:{${group}}`;

describeInterop('interop: group multi-lock (getMultiLock(group, values)) across Java and Node', () => {
  const { admin, client, peer, javaGroupLock } = useInterop({ lockWatchdogTimeout: WATCHDOG });

  /** Samples the group's hash for a while: how many samples showed any field of `value`. */
  async function samplesHolding(group: string, value: string): Promise<number> {
    const field = valueField(value);
    let seen = 0;
    for (let i = 0; i < 10; i++) {
      if (Object.keys(await admin().hgetall(group)).some((key) => key.startsWith(field))) seen += 1;
      await delay(30);
    }
    return seen;
  }

  it('stores the same fields: a Java lock on strings, an Integer and a Long is the hash Node computes', async () => {
    const values = ['a', 'Jack_001', 7, 5n] as const;
    const java = javaGroupLock('same-fields', values);
    await java.lock(LEASE);
    const owner = `${peer().clientId}:${await peer().threadId(java.thread)}`;
    const hash = await admin().hgetall('same-fields');
    const expected = values.flatMap((value) => {
      const field = valueField(value);
      return [field, `${field}:${owner}:expire_time`, `${field}:${owner}:lock_count`];
    });
    expect(Object.keys(hash).sort()).toEqual(expected.sort());
    for (const value of values) expect(hash[valueField(value)]).toBe(owner);
    // Node sees every value held and takes none of them, nor 7 as a Long.
    const redisson = client();
    expect(await redisson.getMultiLock('same-fields', [7]).isLocked()).toBe(true);
    expect(await redisson.getMultiLock('same-fields', [5n, 'zz']).tryLock({ threadId: 1 })).toBe(false);
    expect(await redisson.getMultiLock('same-fields', [7n, 5]).tryLock({ threadId: 1 })).toBe(true);
    await java.unlock();
  });

  it('Java holds {a, b}; Node waits for {b, c}, never holding c alone, and is woken by the Java unlock', async () => {
    const group = 'java-to-node';
    const java = javaGroupLock(group, ['a', 'b']);
    await java.lock(LEASE);
    const redisson = client({ lockWatchdogTimeout: WATCHDOG });
    const node = redisson.getMultiLock(group, ['b', 'c']);
    const acquired = node.tryLock({ threadId: 1, waitTime: 25_000 });
    await eventually(
      async () => (await subscriberCount(admin(), channelOf(group))) === 1,
      10_000,
      'the Node subscription',
    );
    expect(await samplesHolding(group, 'c')).toBe(0);
    // Value by value: Node takes a disjoint set at once.
    expect(await redisson.getMultiLock(group, ['d']).tryLock({ threadId: 2 })).toBe(true);
    await redisson.getMultiLock(group, ['d']).unlock({ threadId: 2 });

    const unlockedAt = performance.now();
    await java.unlock();
    expect(await acquired).toBe(true);
    expect(performance.now() - unlockedAt).toBeLessThan(WAKE_BOUND);
    expect(await admin().hget(group, valueField('b'))).toBe(`${redisson.id}:1`);
    expect(await admin().hget(group, valueField('c'))).toBe(`${redisson.id}:1`);
    expect(await java.isLocked()).toBe(true); // b is Node's now
    await node.unlock({ threadId: 1 });
    expect(await admin().exists(group)).toBe(0);
  });

  it('Node holds {a, b}; Java waits for {b, c}, never holding c alone, and is woken by the Node unlock', async () => {
    const group = 'node-to-java';
    const node = client().getMultiLock(group, ['a', 'b']);
    await node.lock({ threadId: 1, leaseTime: LEASE });
    const java = javaGroupLock(group, ['b', 'c']);
    const acquired = java.tryLock(25_000);
    await eventually(
      async () => (await subscriberCount(admin(), channelOf(group))) === 1,
      10_000,
      'the Java subscription',
    );
    expect(await samplesHolding(group, 'c')).toBe(0);

    const unlockedAt = performance.now();
    await node.unlock({ threadId: 1 });
    expect(await acquired).toBe(true);
    expect(performance.now() - unlockedAt).toBeLessThan(WAKE_BOUND);
    const owner = `${peer().clientId}:${await peer().threadId(java.thread)}`;
    expect(await admin().hget(group, valueField('b'))).toBe(owner);
    expect(await admin().hget(group, valueField('c'))).toBe(owner);
    expect(await admin().hexists(group, valueField('a'))).toBe(0);
    await java.unlock();
    expect(await admin().exists(group)).toBe(0);
  });

  it("counts a Java owner's re-entry per value, as Node reads it", async () => {
    const java = javaGroupLock('reentry', ['a', 1]);
    await java.lock(LEASE);
    await java.lock(LEASE);
    const owner = `${peer().clientId}:${await peer().threadId(java.thread)}`;
    const node = client().getMultiLock('reentry', ['a', 1]);
    expect(await admin().hget('reentry', `${valueField(1)}:${owner}:lock_count`)).toBe('2');
    expect(await node.isLocked()).toBe(true);
    await java.unlock();
    expect(await node.isLocked()).toBe(true);
    await java.unlock();
    expect(await node.isLocked()).toBe(false);
  });

  it('each side renews every value of its set against the other over several leases', async () => {
    const javaHeld = javaGroupLock('renewed', ['a', 'b']);
    await javaHeld.lock();
    const redisson = client({ lockWatchdogTimeout: WATCHDOG });
    const nodeHeld = await redisson.getMultiLock('renewed', ['c', 'd']).acquire();
    const contenders = [
      redisson.getMultiLock('renewed', ['b']).tryLock({ threadId: 9, waitTime: 3 * WATCHDOG }),
      javaGroupLock('renewed', ['d']).tryLock(3 * WATCHDOG),
    ];
    expect(await Promise.all(contenders)).toEqual([false, false]);
    expect(nodeHeld.signal.aborted).toBe(false);
    await nodeHeld.release();
    await javaHeld.unlock();
    expect(await admin().exists('renewed')).toBe(0);
  });
});
