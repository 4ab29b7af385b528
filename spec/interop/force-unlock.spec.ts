import { LockLostError, LockNotHeldError, type LockEvent } from '../../lib';
import { delay } from '../helpers/fixture';
import { eventually, subscriberCount } from '../helpers/redis-server';
import { describeInterop } from './helpers/java-tools';
import { useInterop } from './helpers/use-interop';

/** Lease of the Node holder: its watchdog checks every 5 s, so it learns of a loss within about that. */
const NODE_HOLDER_LEASE = 15_000;
/** A wake-up by message must come well under the holder's remaining lease. */
const WAKE_BOUND = 5_000;

const channelOf = (name: string): string => `redisson_lock__channel:{${name}}`;

describeInterop('interop: forceUnlock from the other side', () => {
  const { admin, client, peer, javaLock } = useInterop();

  /** Starts a waiter on `side` and resolves once it is parked on the channel; `acquired` settles when it holds. */
  async function startWaiter(name: string, side: 'node' | 'java'): Promise<{ acquired: Promise<boolean>; holds: () => Promise<boolean>; release: () => Promise<unknown> }> {
    const before = await subscriberCount(admin(), channelOf(name));
    if (side === 'java') {
      const java = javaLock(name);
      const acquired = java.tryLock(25_000);
      await eventually(async () => (await subscriberCount(admin(), channelOf(name))) > before, 10_000, 'the Java waiter to subscribe');
      return { acquired, holds: () => java.isHeldByCurrentThread(), release: () => java.unlock() };
    }
    const redisson = client();
    const node = redisson.getLock(name);
    const acquired = node.tryLock({ threadId: 9, waitTime: 25_000 });
    await eventually(() => redisson.diagnostics().waiters === 1, 10_000, 'the Node waiter to park');
    return { acquired, holds: () => node.isHeldByThread(9), release: () => node.unlock({ threadId: 9 }) };
  }

  it.each(['node', 'java'] as const)('Java forceUnlock of a Node holder wakes a %s waiter; the holder is told', async (waiterSide) => {
    const name = `force:node-held:${waiterSide}`;
    const holderClient = client({ lockWatchdogTimeout: NODE_HOLDER_LEASE });
    const lost: LockEvent[] = [];
    holderClient.on('lockLost', (event) => lost.push(event));
    const handle = await holderClient.getLock(name).acquire();
    const waiter = await startWaiter(name, waiterSide);
    await delay(100);
    expect(await admin().pttl(name)).toBeGreaterThan(NODE_HOLDER_LEASE - 6_000);

    const forcedAt = performance.now();
    expect(await javaLock(name).forceUnlock()).toBe(true);
    expect(await waiter.acquired).toBe(true);
    expect(performance.now() - forcedAt).toBeLessThan(WAKE_BOUND);
    expect(await waiter.holds()).toBe(true);

    // The Node holder's watchdog finds its field gone at its next renewal.
    await eventually(() => handle.signal.aborted, NODE_HOLDER_LEASE, 'the holder signal to abort');
    expect(handle.signal.reason).toBeInstanceOf(LockLostError);
    expect(lost).toEqual([expect.objectContaining({ name, owner: `${holderClient.id}:${handle.threadId}` })]);
    await expect(handle.release()).rejects.toBeInstanceOf(LockNotHeldError);
    // The waiter's hold survived the old holder's release attempt.
    expect(await waiter.holds()).toBe(true);
    await waiter.release();
    expect(await admin().exists(name)).toBe(0);
  });

  it.each(['node', 'java'] as const)('Node forceUnlock of a Java holder wakes a %s waiter; the Java holder has lost it', async (waiterSide) => {
    const name = `force:java-held:${waiterSide}`;
    const holder = javaLock(name);
    await holder.lock(); // watchdog lease: 30 s, renewed by Java
    const waiter = await startWaiter(name, waiterSide);
    await delay(100);
    expect(await admin().pttl(name)).toBeGreaterThan(20_000);

    const forcedAt = performance.now();
    expect(await client().getLock(name).forceUnlock()).toBe(true);
    expect(await waiter.acquired).toBe(true);
    expect(performance.now() - forcedAt).toBeLessThan(WAKE_BOUND);

    // Only the waiter's field: the Java watchdog does not bring the old holder back.
    const fields = Object.keys(await admin().hgetall(name));
    expect(fields).toHaveLength(1);
    expect(fields).not.toContain(`${peer().clientId}:${await peer().threadId(holder.thread)}`);
    expect(await holder.isHeldByCurrentThread()).toBe(false);
    await expect(holder.unlock()).rejects.toThrow(/IllegalMonitorStateException/);
    expect(await waiter.holds()).toBe(true);
    await waiter.release();
    expect(await admin().exists(name)).toBe(0);
  });
});
