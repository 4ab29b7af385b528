import type { RedissonClient } from '../../lib';
import { delay } from '../helpers/fixture';
import { describeInterop } from './helpers/java-tools';
import type { JavaPeer } from './helpers/peer';
import { useInterop } from './helpers/use-interop';

const ROUNDS = 20;
/**
 * Pause between a worker's release and its next acquisition, as real work has. Without it, a Node
 * worker re-acquires within microseconds of its own release, and a Java waiter, woken by message
 * through a JVM thread, rarely gets a turn until the Node workers are done: the lock is not fair.
 */
const THINK_MS = 25;
const COUNTER = 'interop:counter';
const LOCK = 'interop:counter-lock';

describeInterop('interop: mutual exclusion between Java and Node', () => {
  const { admin, client, peer, javaLock } = useInterop();

  /** Read, pause, write: loses updates when two run at once. */
  async function nodeIncrement(): Promise<void> {
    const value = Number((await admin().get(COUNTER)) ?? 0);
    await delay(2);
    await admin().set(COUNTER, value + 1);
  }

  function javaIncrement(javaPeer: JavaPeer, thread: number): Promise<number> {
    return javaPeer.call<number>({ op: 'unsafeIncrement', kind: 'counter', name: COUNTER, thread, pauseMs: 2 });
  }

  it('counts exactly with 2 Java threads and 2 Node clients incrementing under one lock', async () => {
    const holders: string[] = [];
    const javaWorker = async (): Promise<void> => {
      const lock = javaLock(LOCK);
      for (let i = 0; i < ROUNDS; i++) {
        await lock.lock();
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
      const lock = redisson.getLock(LOCK);
      for (let i = 0; i < ROUNDS; i++) {
        await lock.using(async () => {
          holders.push('node');
          await nodeIncrement();
        });
        await delay(THINK_MS);
      }
    };

    await Promise.all([javaWorker(), javaWorker(), nodeWorker(client()), nodeWorker(client())]);

    expect(Number(await admin().get(COUNTER))).toBe(4 * ROUNDS);
    expect(await peer().call({ op: 'get', kind: 'counter', name: COUNTER })).toBe(4 * ROUNDS);
    // The lock really changed hands across languages, both ways.
    const handOffs = holders.slice(1).map((holder, i) => `${holders[i]}->${holder}`);
    expect(handOffs).toContain('java->node');
    expect(handOffs).toContain('node->java');
    expect(await admin().exists(LOCK)).toBe(0);
  });

  it('loses updates without the lock (the counter does detect overlap)', async () => {
    const javaWorker = async (thread: number): Promise<void> => {
      for (let i = 0; i < ROUNDS; i++) await javaIncrement(peer(), thread);
    };
    const nodeWorker = async (): Promise<void> => {
      for (let i = 0; i < ROUNDS; i++) await nodeIncrement();
    };
    await Promise.all([javaWorker(peer().newThread()), javaWorker(peer().newThread()), nodeWorker(), nodeWorker()]);
    expect(Number(await admin().get(COUNTER))).toBeLessThan(4 * ROUNDS);
  });
});
