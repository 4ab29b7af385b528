import { delay } from '../helpers/fixture';
import { eventually, subscriberCount } from '../helpers/redis-server';
import { describeInterop } from './helpers/java-tools';
import { useInterop } from './helpers/use-interop';

const PERMITS = 3;
const WORKERS_PER_SIDE = 3;
const ROUNDS = 4;
const HOLD_MS = 40;
/**
 * A wake-up by message must come within this. Node waiters re-check by themselves every 5 s
 * (PERMIT_RECHECK_MS) and Java's acquire() never does: under 3 s is a message.
 */
const WAKE_BOUND = 3_000;

// Redisson's names, written out.
const channelOf = (name: string): string => `redisson_sc:{${name}}`;

describeInterop('interop: semaphore (RSemaphore) across Java and Node', () => {
  const { admin, client, javaSemaphore } = useInterop();

  it.each(['java', 'node'] as const)('permits set on the %s side are counted by both: holders never exceed them', async (setter) => {
    const name = `semaphore:count:${setter}`;
    const java = javaSemaphore(name);
    const node = client().getSemaphore(name);
    if (setter === 'java') {
      expect(await java.trySetPermits(PERMITS)).toBe(true);
      expect(await node.trySetPermits(PERMITS + 1)).toBe(false);
    } else {
      expect(await node.trySetPermits(PERMITS)).toBe(true);
      expect(await java.trySetPermits(PERMITS + 1)).toBe(false);
    }
    expect(await admin().get(name)).toBe(String(PERMITS));
    expect(await java.availablePermits()).toBe(PERMITS);
    expect(await node.availablePermits()).toBe(PERMITS);

    let inUse = 0;
    let most = 0;
    const sides = new Set<string>();
    const hold = async (side: string): Promise<void> => {
      inUse += 1;
      most = Math.max(most, inUse);
      sides.add(side);
      // Redis never hands out more than it has.
      expect(Number(await admin().get(name))).toBeGreaterThanOrEqual(0);
      await delay(HOLD_MS);
      inUse -= 1;
    };
    const javaWorker = async (): Promise<void> => {
      const sem = javaSemaphore(name);
      for (let i = 0; i < ROUNDS; i++) {
        await sem.acquire();
        await hold('java');
        await sem.release();
      }
    };
    const nodeWorker = async (): Promise<void> => {
      const sem = client().getSemaphore(name);
      for (let i = 0; i < ROUNDS; i++) {
        const handle = await sem.acquire();
        await hold('node');
        await handle.release();
      }
    };
    await Promise.all([
      ...Array.from({ length: WORKERS_PER_SIDE }, javaWorker),
      ...Array.from({ length: WORKERS_PER_SIDE }, nodeWorker),
    ]);

    expect(most).toBeLessThanOrEqual(PERMITS);
    // The permits were really contended, and held by both sides.
    expect(most).toBe(PERMITS);
    expect(sides).toEqual(new Set(['java', 'node']));
    expect(await java.availablePermits()).toBe(PERMITS);
    expect(await node.availablePermits()).toBe(PERMITS);
  });

  it.each(['java', 'node'] as const)('a %s release wakes a waiter of the other side by message', async (releaser) => {
    const name = `semaphore:wake:${releaser}`;
    const listener = admin().duplicate();
    const messages: string[] = [];
    try {
      await listener.subscribe(channelOf(name));
      listener.on('message', (_channel: string, message: string) => messages.push(message));
      const java = javaSemaphore(name);
      const redisson = client();
      const node = redisson.getSemaphore(name);
      expect(await java.trySetPermits(0)).toBe(true);
      await eventually(() => messages.length === 1, 5_000, 'the trySetPermits message');

      let waiting: Promise<unknown>;
      if (releaser === 'java') {
        waiting = node.acquire({ waitTime: 25_000 });
        await eventually(() => redisson.diagnostics().waiters === 1, 10_000, 'the Node waiter to park');
      } else {
        waiting = java.acquire();
      }
      await eventually(async () => (await subscriberCount(admin(), channelOf(name))) === 2, 10_000, 'the waiter subscription');
      await delay(200);
      expect(await admin().get(name)).toBe('0');

      const releasedAt = performance.now();
      if (releaser === 'java') await java.release();
      else await node.release();
      await waiting;
      expect(performance.now() - releasedAt).toBeLessThan(WAKE_BOUND);
      // trySetPermits published the count it set, the release the count after it.
      expect(messages).toEqual(['0', '1']);
      expect(await admin().get(name)).toBe('0');
    } finally {
      listener.disconnect();
    }
  });
});
