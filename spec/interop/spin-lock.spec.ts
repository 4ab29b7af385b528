import type { RedissonClient } from '../../lib';
import { delay } from '../helpers/fixture';
import type { JavaLockKind } from './helpers/java-lock';
import { describeInterop } from './helpers/java-tools';
import type { JavaPeer } from './helpers/peer';
import { useInterop } from './helpers/use-interop';

const ROUNDS = 8;
/** Pause between a worker's release and its next acquisition, so that every worker gets turns. */
const THINK_MS = 25;
/**
 * Holders' lease when a pub/sub lock shares the name with a spin lock: a spin unlock publishes
 * nothing, so an RLock waiter (either side) only re-checks when the holder's lease would end.
 */
const SHORT_LEASE = 2_000;
const COUNTER = 'interop:spin-counter';

type NodeKind = 'spin' | 'rlock';
const cases: Array<[JavaLockKind, NodeKind, number]> = [
  ['spinLock', 'spin', -1],
  ['lock', 'spin', SHORT_LEASE],
  ['spinLock', 'rlock', SHORT_LEASE],
];
/**
 * Whether the lock must change hands both ways: only between spin locks. An RLock waiter behind
 * spin holders re-checks only at the end of a holder's lease (a spin unlock publishes nothing),
 * while the spinners poll every few ms, so the spinning side often finishes all its rounds first
 * (as with Redisson on both sides): one cross-language hand-off is all that is sure.
 */
const bothWays = (javaKind: JavaLockKind, nodeKind: NodeKind): boolean => javaKind === 'spinLock' && nodeKind === 'spin';
const cross = (handOff: string): boolean => handOff === 'java->node' || handOff === 'node->java';

describeInterop('interop: spin lock (getSpinLock) across Java and Node', () => {
  const { admin, client, peer, javaLock } = useInterop();

  async function nodeIncrement(): Promise<void> {
    const value = Number((await admin().get(COUNTER)) ?? 0);
    await delay(2);
    await admin().set(COUNTER, value + 1);
  }

  function javaIncrement(javaPeer: JavaPeer, thread: number): Promise<number> {
    return javaPeer.call<number>({ op: 'unsafeIncrement', kind: 'counter', name: COUNTER, thread, pauseMs: 2 });
  }

  const nodeLockOf = (redisson: RedissonClient, kind: NodeKind, name: string) =>
    kind === 'spin' ? redisson.getSpinLock(name) : redisson.getLock(name);

  it.each(cases)('Java %s and Node %s exclude each other: 2 + 2 workers count exactly', async (javaKind, nodeKind, leaseMs) => {
    const name = `spin:count:${javaKind}:${nodeKind}`;
    const holders: string[] = [];
    const javaWorker = async (): Promise<void> => {
      const lock = javaLock(name, javaKind);
      for (let i = 0; i < ROUNDS; i++) {
        await lock.lock(leaseMs);
        holders.push('java');
        try {
          await javaIncrement(peer(), lock.thread);
        } finally {
          await lock.unlock();
        }
        await peer().call({ op: 'sleep', thread: lock.thread, ms: THINK_MS });
      }
    };
    const nodeWorker = async (redisson: RedissonClient): Promise<void> => {
      const lock = nodeLockOf(redisson, nodeKind, name);
      for (let i = 0; i < ROUNDS; i++) {
        await lock.lock({ threadId: 1, ...(leaseMs > 0 ? { leaseTime: leaseMs } : {}) });
        holders.push('node');
        try {
          await nodeIncrement();
        } finally {
          await lock.unlock({ threadId: 1 });
        }
        await delay(THINK_MS);
      }
    };

    await Promise.all([javaWorker(), javaWorker(), nodeWorker(client()), nodeWorker(client())]);

    expect(Number(await admin().get(COUNTER))).toBe(4 * ROUNDS);
    const handOffs = holders.slice(1).map((holder, i) => `${holders[i]}->${holder}`);
    if (bothWays(javaKind, nodeKind)) {
      expect(handOffs).toContain('java->node');
      expect(handOffs).toContain('node->java');
    } else {
      expect(handOffs.some(cross)).toBe(true);
    }
    expect(await admin().exists(name)).toBe(0);
  });

  it.each(cases)('a Java %s holder and a Node %s holder each keep the other out, in the same hash field format', async (javaKind, nodeKind) => {
    const name = `spin:busy:${javaKind}:${nodeKind}`;
    const java = javaLock(name, javaKind);
    const tid = await peer().threadId(java.thread);
    const redisson = client();
    const node = nodeLockOf(redisson, nodeKind, name);

    await java.lock();
    await java.lock();
    expect(await admin().hgetall(name)).toEqual({ [`${peer().clientId}:${tid}`]: '2' });
    expect(await node.tryLock({ threadId: 1, waitTime: 300 })).toBe(false);
    expect(await node.isLocked()).toBe(true);
    await java.unlock();
    await java.unlock();

    await node.lock({ threadId: 1 });
    await node.lock({ threadId: 1 });
    expect(await admin().hgetall(name)).toEqual({ [`${redisson.id}:1`]: '2' });
    expect(await java.tryLock(300)).toBe(false);
    expect(await java.isLocked()).toBe(true);
    expect(await java.getHoldCount()).toBe(0);
    await node.unlock({ threadId: 1 });
    await node.unlock({ threadId: 1 });
    expect(await admin().exists(name)).toBe(0);
  });

  it('neither side publishes on a spin-lock unlock', async () => {
    const name = 'spin:silent';
    const listener = admin().duplicate();
    const messages: string[] = [];
    try {
      await listener.psubscribe('*');
      listener.on('pmessage', (_pattern: string, channel: string, message: string) => messages.push(`${channel} ${message}`));
      const java = javaLock(name, 'spinLock');
      const node = client().getSpinLock(name);
      await java.lock();
      await java.unlock();
      await node.lock({ threadId: 1 });
      await node.unlock({ threadId: 1 });
      await node.lock({ threadId: 1 });
      expect(await java.forceUnlock()).toBe(true);
      await java.lock();
      expect(await node.forceUnlock()).toBe(true);
      // A control: an RLock unlock of the same name does publish, and the listener hears it.
      const rlock = javaLock(name);
      await rlock.lock();
      await rlock.unlock();
      await delay(300);
      expect(messages).toEqual([`redisson_lock__channel:{${name}} 0`]);
    } finally {
      listener.disconnect();
    }
  });
});
