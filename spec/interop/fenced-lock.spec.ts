import { delay } from '../helpers/fixture';
import { eventually, subscriberCount } from '../helpers/redis-server';
import { describeInterop } from './helpers/java-tools';
import { useInterop } from './helpers/use-interop';

const LEASE = 30_000;
/** A wake-up by message must come well under the lease, even on a loaded 2-core machine. */
const WAKE_BOUND = 5_000;
const ROUNDS = 5;

// Redisson's names, written out.
const tokenKeyOf = (name: string): string => `redisson_lock_token:{${name}}`;
const channelOf = (name: string): string => `redisson_lock__channel:{${name}}`;

describeInterop('interop: fenced lock (RFencedLock) across Java and Node', () => {
  const { admin, client, javaFencedLock } = useInterop();

  it('hands out strictly increasing tokens to alternating Java and Node acquisitions', async () => {
    const name = 'fenced:alternate';
    const java = javaFencedLock(name);
    const node = client().getFencedLock(name);
    const tokens: Array<{ side: string; token: number }> = [];
    const record = async (side: string, token: number | null): Promise<void> => {
      expect(typeof token).toBe('number');
      tokens.push({ side, token: token! });
      // Both sides read the counter the other side just moved.
      expect(await java.getToken()).toBe(token);
      expect(await node.getToken()).toBe(token);
      expect(await admin().get(tokenKeyOf(name))).toBe(String(token));
    };
    for (let round = 0; round < ROUNDS; round++) {
      await record('java', await java.lockAndGetToken());
      await java.unlock();
      await record('node', await node.lockAndGetToken({ threadId: 1 }));
      await node.unlock({ threadId: 1 });
      await record('java', await java.tryLockAndGetToken(1_000, LEASE));
      await java.unlock();
      await record('node', await node.tryLockAndGetToken({ threadId: 1, waitTime: 1_000, leaseTime: LEASE }));
      await node.unlock({ threadId: 1 });
      const handle = await node.acquire({ threadId: 1 });
      await record('node', handle.fencingToken);
      await handle.release();
    }
    // One more per acquisition, whoever draws it, in the order drawn.
    expect(tokens.map(({ token }) => token)).toEqual(tokens.map((_, i) => i + 1));
    expect(new Set(tokens.map(({ side }) => side))).toEqual(new Set(['java', 'node']));
    // The counter outlives the lock.
    expect(await admin().exists(name)).toBe(0);
    expect(await admin().ttl(tokenKeyOf(name))).toBe(-1);
  });

  it('counts re-entries and plain lock() acquisitions on both sides', async () => {
    const name = 'fenced:reentry';
    const java = javaFencedLock(name);
    const node = client().getFencedLock(name);
    await java.lock();
    expect(await java.lockAndGetToken()).toBe(2);
    await java.unlock();
    await java.unlock();
    await node.lock({ threadId: 1 });
    expect(await node.lockAndGetToken({ threadId: 1 })).toBe(4);
    await node.unlock({ threadId: 1 });
    await node.unlock({ threadId: 1 });
    expect(await java.tryLockAndGetToken(0)).toBe(5);
    await java.unlock();
    expect(await node.getToken()).toBe(5);
  });

  it.each(['java', 'node'] as const)('a %s holder keeps the other side out and moves no token for its failed attempts', async (holderSide) => {
    const name = `fenced:busy:${holderSide}`;
    const java = javaFencedLock(name);
    const node = client().getFencedLock(name);
    const held = holderSide === 'java' ? await java.lockAndGetToken() : await node.lockAndGetToken({ threadId: 1 });
    expect(held).toBe(1);
    if (holderSide === 'java') {
      expect(await node.tryLockAndGetToken({ threadId: 1, waitTime: 300 })).toBeNull();
      expect(await node.tryLockAndGetToken({ threadId: 1 })).toBeNull();
    } else {
      expect(await java.tryLockAndGetToken(300)).toBeNull();
      expect(await java.tryLockAndGetToken(0)).toBeNull();
    }
    expect(await admin().get(tokenKeyOf(name))).toBe('1');
    if (holderSide === 'java') await java.unlock();
    else await node.unlock({ threadId: 1 });
  });

  it.each(['java', 'node'] as const)('a %s unlock wakes a waiting lockAndGetToken() of the other side, which draws the next token', async (holderSide) => {
    const name = `fenced:wake:${holderSide}`;
    const java = javaFencedLock(name);
    const redisson = client();
    const node = redisson.getFencedLock(name);
    let waiting: Promise<number>;
    if (holderSide === 'java') {
      expect(await java.tryLockAndGetToken(0, LEASE)).toBe(1);
      waiting = node.lockAndGetToken({ threadId: 1 });
      await eventually(() => redisson.diagnostics().waiters === 1, 10_000, 'the Node waiter to park');
    } else {
      expect(await node.tryLockAndGetToken({ threadId: 1, leaseTime: LEASE })).toBe(1);
      waiting = java.lockAndGetToken();
    }
    await eventually(async () => (await subscriberCount(admin(), channelOf(name))) === 1, 10_000, 'the waiter subscription');
    await delay(100);

    const unlockedAt = performance.now();
    if (holderSide === 'java') await java.unlock();
    else await node.unlock({ threadId: 1 });
    expect(await waiting).toBe(2);
    expect(performance.now() - unlockedAt).toBeLessThan(WAKE_BOUND);
    if (holderSide === 'java') await node.unlock({ threadId: 1 });
    else await java.unlock();
    expect(await admin().exists(name)).toBe(0);
  });
});
