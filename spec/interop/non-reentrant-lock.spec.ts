import { LockReentryError, type RedissonClient } from '../../lib';
import { delay } from '../helpers/fixture';
import { eventually, subscriberCount } from '../helpers/redis-server';
import { describeInterop } from './helpers/java-tools';
import { useInterop } from './helpers/use-interop';

const LEASE = 30_000;
/** A wake-up by message must come well under the lease, even on a loaded 2-core machine. */
const WAKE_BOUND = 5_000;

type Kind = 'nonReentrantLock' | 'nonReentrantFairLock';
const kinds: Kind[] = ['nonReentrantLock', 'nonReentrantFairLock'];
const cases = kinds.flatMap((kind) => (['java', 'node'] as const).map((holder) => [kind, holder] as const));

/** Where a waiter of `kind` listens: RLock's shared channel, or a fair lock's per-waiter one. */
const waiterChannelOf = (kind: Kind, name: string, owner: string): string =>
  kind === 'nonReentrantLock' ? `redisson_lock__channel:{${name}}` : `redisson_lock__channel:{${name}}:${owner}`;

describeInterop('interop: non-reentrant locks (getNonReentrantLock, getNonReentrantFairLock) across Java and Node', () => {
  const { admin, client, peer, javaLock } = useInterop();

  const nodeLockOf = (redisson: RedissonClient, kind: Kind, name: string) =>
    kind === 'nonReentrantLock' ? redisson.getNonReentrantLock(name) : redisson.getNonReentrantFairLock(name);

  it.each(cases)('%s: a %s holder excludes the other side, which gets it by message on release', async (kind, holderSide) => {
    const name = `nonreentrant:${kind}:${holderSide}`;
    const java = javaLock(name, kind);
    const javaOwner = `${peer().clientId}:${await peer().threadId(java.thread)}`;
    const redisson = client();
    const node = nodeLockOf(redisson, kind, name);
    const nodeOwner = `${redisson.id}:1`;
    const [holderOwner, waiterOwner] = holderSide === 'java' ? [javaOwner, nodeOwner] : [nodeOwner, javaOwner];

    if (holderSide === 'java') await java.lock(LEASE);
    else await node.lock({ threadId: 1, leaseTime: LEASE });
    expect(await admin().hgetall(name)).toEqual({ [holderOwner]: '1' });

    // The other side is kept out: a single attempt, a short wait.
    if (holderSide === 'java') {
      expect(await node.tryLock({ threadId: 1 })).toBe(false);
      expect(await node.tryLock({ threadId: 1, waitTime: 300 })).toBe(false);
    } else {
      expect(await java.tryLock(0)).toBe(false);
      expect(await java.tryLock(300)).toBe(false);
    }
    // The holder itself is refused a second hold on its own side; its hold stays as it was.
    if (holderSide === 'java') {
      await expect(java.tryLock(0)).rejects.toThrow(/IllegalMonitorStateException: .*non-reentrant/);
    } else {
      await expect(node.tryLock({ threadId: 1 })).rejects.toBeInstanceOf(LockReentryError);
    }
    expect(await admin().hgetall(name)).toEqual({ [holderOwner]: '1' });

    // A waiter of the other side, woken by the holder's release.
    const waiting = holderSide === 'java' ? node.tryLock({ threadId: 1, waitTime: 25_000 }) : java.tryLock(25_000, LEASE);
    await eventually(async () => (await subscriberCount(admin(), waiterChannelOf(kind, name, waiterOwner))) === 1, 10_000, 'the waiter subscription');
    await delay(100);
    const unlockedAt = performance.now();
    if (holderSide === 'java') await java.unlock();
    else await node.unlock({ threadId: 1 });
    expect(await waiting).toBe(true);
    expect(performance.now() - unlockedAt).toBeLessThan(WAKE_BOUND);
    expect(await admin().hgetall(name)).toEqual({ [waiterOwner]: '1' });

    // Now the first side is the one kept out.
    if (holderSide === 'java') {
      expect(await java.tryLock(0)).toBe(false);
      await node.unlock({ threadId: 1 });
    } else {
      expect(await node.tryLock({ threadId: 1 })).toBe(false);
      await java.unlock();
    }
    await eventually(async () => (await admin().keys('*')).filter((key) => !key.startsWith('redisson_unlock_latch:')).length === 0, 5_000, 'no lock keys left');
  });

  it.each(kinds)('%s: a Java holder and Node\'s reentrant lock of the same storage (RLock, fair lock) exclude each other', async (kind) => {
    // The non-reentrant kinds share the hash with RLock / RFairLock: the plain lock of the other
    // side is kept out too.
    const name = `nonreentrant:mixed:${kind}`;
    const java = javaLock(name, kind);
    await java.lock(LEASE);
    const redisson = client();
    const plain = kind === 'nonReentrantLock' ? redisson.getLock(name) : redisson.getFairLock(name);
    expect(await plain.tryLock({ threadId: 1 })).toBe(false);
    await java.unlock();
    expect(await plain.tryLock({ threadId: 1 })).toBe(true);
    expect(await java.tryLock(0)).toBe(false);
    await plain.unlock({ threadId: 1 });
  });
});
