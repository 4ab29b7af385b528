import { delay } from '../helpers/fixture';
import { eventually, subscriberCount } from '../helpers/redis-server';
import { describeInterop } from './helpers/java-tools';
import { useInterop } from './helpers/use-interop';

/** The holder's lease: a waiter that only re-checked when it ran out would take about this long. */
const LEASE = 30_000;
/** A wake-up by message must come well under the lease, even on a loaded machine. */
const WAKE_BOUND = 5_000;

const channelOf = (name: string): string => `redisson_lock__channel:{${name}}`;

describeInterop('interop: an unlock on one side wakes a waiter on the other by message', () => {
  const { admin, client, javaLock } = useInterop();

  it.each(['lock', 'tryLock'] as const)('Java unlock wakes a Node waiter in %s()', async (method) => {
    const name = `wake:java-to-node:${method}`;
    const java = javaLock(name);
    await java.lock(LEASE);
    const redisson = client();
    const node = redisson.getLock(name);
    const acquired = method === 'lock' ? node.lock({ threadId: 1 }).then(() => true) : node.tryLock({ threadId: 1, waitTime: 25_000 });
    // Parked on the channel, after its attempt failed.
    await eventually(() => redisson.diagnostics().waiters === 1, 10_000, 'the Node waiter to park');
    await eventually(async () => (await subscriberCount(admin(), channelOf(name))) === 1, 10_000, 'the Node subscription');
    await delay(100);
    expect(await admin().pttl(name)).toBeGreaterThan(LEASE - 10_000);

    const unlockedAt = performance.now();
    await java.unlock();
    expect(await acquired).toBe(true);
    expect(performance.now() - unlockedAt).toBeLessThan(WAKE_BOUND);

    expect(await node.isHeldByThread(1)).toBe(true);
    await node.unlock({ threadId: 1 });
  });

  it.each(['lock', 'tryLock'] as const)('Node unlock wakes a Java waiter in %s()', async (method) => {
    const name = `wake:node-to-java:${method}`;
    const node = client().getLock(name);
    await node.lock({ threadId: 1, leaseTime: LEASE });
    const java = javaLock(name);
    const acquired = method === 'lock' ? java.lock().then(() => true) : java.tryLock(25_000);
    // Redisson subscribes only after its first attempt failed; the Node holder is not subscribed.
    await eventually(async () => (await subscriberCount(admin(), channelOf(name))) === 1, 10_000, 'the Java subscription');
    await delay(100);
    expect(await admin().pttl(name)).toBeGreaterThan(LEASE - 10_000);

    const unlockedAt = performance.now();
    await node.unlock({ threadId: 1 });
    expect(await acquired).toBe(true);
    expect(performance.now() - unlockedAt).toBeLessThan(WAKE_BOUND);

    expect(await java.isHeldByCurrentThread()).toBe(true);
    await java.unlock();
    expect(await admin().exists(name)).toBe(0);
  });

  it('publishes the same message on the same channel from either side', async () => {
    const name = 'wake:messages';
    const listener = admin().duplicate();
    const messages: string[] = [];
    try {
      await listener.subscribe(channelOf(name));
      listener.on('message', (channel: string, message: string) => messages.push(`${channel} ${message}`));
      const java = javaLock(name);
      const node = client().getLock(name);

      await java.lock();
      await java.unlock();
      await eventually(() => messages.length === 1, 5_000, 'the Java unlock message');
      await node.lock({ threadId: 1 });
      await node.unlock({ threadId: 1 });
      await eventually(() => messages.length === 2, 5_000, 'the Node unlock message');
      await node.lock({ threadId: 1 });
      expect(await java.forceUnlock()).toBe(true);
      await eventually(() => messages.length === 3, 5_000, 'the Java forceUnlock message');
      await java.lock();
      expect(await node.forceUnlock()).toBe(true);
      await eventually(() => messages.length === 4, 5_000, 'the Node forceUnlock message');

      expect(messages).toEqual(Array(4).fill(`${channelOf(name)} 0`));
    } finally {
      listener.disconnect();
    }
  });
});
