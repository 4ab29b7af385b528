import { delay } from '../helpers/fixture';
import { eventually, subscriberCount } from '../helpers/redis-server';
import { describeInterop } from './helpers/java-tools';
import { useInterop } from './helpers/use-interop';

/**
 * Waiters must open within this of the last countDown. Node waiters re-check by themselves every
 * 5 s (LATCH_RECHECK_MS) and Java's await() never does: under 3 s is a message.
 */
const OPEN_BOUND = 3_000;
const COUNT = 2;

// Redisson's names, written out (always braces around the name).
const channelOf = (name: string): string => `redisson_countdownlatch__channel__{${name}}`;

describeInterop('interop: count-down latch (RCountDownLatch) across Java and Node', () => {
  const { admin, client, javaLatch } = useInterop();

  it.each([
    ['Java', 'Node'],
    ['Node', 'Java'],
  ] as const)('a latch set on the %s side and counted down on the %s side opens waiters on both sides', async (setter, _counterSide) => {
    const name = `latch:${setter}`;
    const listener = admin().duplicate();
    const messages: string[] = [];
    try {
      await listener.subscribe(channelOf(name));
      listener.on('message', (_channel: string, message: string) => messages.push(message));
      const java = javaLatch(name);
      const redisson = client();
      const node = redisson.getCountDownLatch(name);
      if (setter === 'Java') {
        expect(await java.trySetCount(COUNT)).toBe(true);
        expect(await node.trySetCount(COUNT + 3)).toBe(false);
      } else {
        expect(await node.trySetCount(COUNT)).toBe(true);
        expect(await java.trySetCount(COUNT + 3)).toBe(false);
      }
      expect(await admin().get(name)).toBe(String(COUNT));
      expect(await java.getCount()).toBe(COUNT);
      expect(await node.getCount()).toBe(COUNT);

      // Two waiters per side: Java's on threads of their own, without a time bound.
      const opened: string[] = [];
      const waiters = [
        javaLatch(name).await().then(() => opened.push('java')),
        javaLatch(name).await().then(() => opened.push('java')),
        node.await().then((open) => open && opened.push('node')),
        node.await().then((open) => open && opened.push('node')),
      ];
      await eventually(() => redisson.diagnostics().waiters === 2, 10_000, 'the Node waiters to park');
      await eventually(async () => (await subscriberCount(admin(), channelOf(name))) === 3, 10_000, 'both sides\' subscriptions');
      await delay(200);

      const counter = setter === 'Java' ? node : java;
      await counter.countDown();
      expect(await java.getCount()).toBe(COUNT - 1);
      expect(await node.getCount()).toBe(COUNT - 1);
      await delay(300);
      expect(opened).toEqual([]);

      const openedAt = performance.now();
      await counter.countDown();
      await Promise.all(waiters);
      expect(performance.now() - openedAt).toBeLessThan(OPEN_BOUND);
      expect(opened.sort()).toEqual(['java', 'java', 'node', 'node']);
      expect(await admin().exists(name)).toBe(0);
      expect(await java.getCount()).toBe(0);
      expect(await node.getCount()).toBe(0);
      // 1 when the count was set, 0 when it reached zero: the same messages from either side.
      expect(messages).toEqual(['1', '0']);
    } finally {
      listener.disconnect();
    }
  });

  it.each(['java', 'node'] as const)('a %s await with a bound times out on a closed latch set by the other side', async (waiterSide) => {
    const name = `latch:closed:${waiterSide}`;
    const java = javaLatch(name);
    const node = client().getCountDownLatch(name);
    if (waiterSide === 'java') {
      expect(await node.trySetCount(1)).toBe(true);
      expect(await java.await(500)).toBe(false);
    } else {
      expect(await java.trySetCount(1)).toBe(true);
      expect(await node.await({ waitTime: 500 })).toBe(false);
    }
    expect(await admin().get(name)).toBe('1');
  });
});
