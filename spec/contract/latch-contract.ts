import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { ClientClosedError, InvalidArgumentError } from '../../lib';
import { latchChannel } from '../../lib/keys';
import { delay } from '../helpers/fixture';
import { eventually } from '../helpers/redis-server';
import { expectWaitsLeaveNothing } from '../helpers/clean-up';
import { STANDALONE, useTopology } from '../helpers/topology';
import type { ContractFixture } from './lock-contract';

const WORKER = join(__dirname, 'fixtures', 'latch-worker.mjs');

/**
 * The count-down latch contract, on real Redis: a standalone server by default, or the deployment
 * of `fixture` (`useTopology(clusterTopology())`).
 */
export function latchContract(fixture: ContractFixture = useTopology(STANDALONE)): void {
  const { client, deployment } = fixture;
  const admin = () => deployment().admin();
  const subscriberCount = (channel: string) => deployment().subscribers(channel);
  const expectUnsubscribed = (channel: string) =>
    eventually(async () => (await subscriberCount(channel)) === 0, 5_000, `no subscriber on ${channel}`);

  function run(name: string, role: 'await' | 'countdown') {
    const child = spawn(process.execPath, [WORKER, deployment().target, name, role], { stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const exited = once(child, 'exit').then(([code]) => ({ code: code as number, out, err }));
    return { child, exited };
  }

  describe(`RCountDownLatch on ${fixture.name}`, () => {
    it('counted down from 5 by 5 processes, releases every waiter of 2 processes and 3 clients promptly', async () => {
      const name = 'latch:five';
      expect(await client().getCountDownLatch(name).trySetCount(5)).toBe(true);
      const processes = [run(name, 'await'), run(name, 'await')];
      const clients = [client(), client(), client()];
      const local = clients.flatMap((redisson) =>
        [1, 2, 3].map(() => redisson.getCountDownLatch(name).await({ waitTime: 30_000 }).then((opened) => ({ opened, at: Date.now() }))),
      );
      // Every waiting process and client subscribed: 2 + 3 subscriber connections.
      await eventually(async () => (await subscriberCount(latchChannel(name))) === 5, 20_000, 'five subscribers');
      const counters = [1, 2, 3, 4, 5].map(() => run(name, 'countdown'));
      const counted = await Promise.all(counters.map((counter) => counter.exited));
      expect(counted.map((c) => c.code)).toEqual([0, 0, 0, 0, 0]);
      const lastCountDown = Date.now();
      expect(await client().getCountDownLatch(name).getCount()).toBe(0);
      const waited = await Promise.all(processes.map((p) => p.exited));
      expect(waited.map((w) => w.err)).toEqual(['', '']);
      const opened = [
        ...waited.map((w) => JSON.parse(w.out.trim().split('\n').pop()!) as { opened: boolean; at: number }),
        ...(await Promise.all(local)),
      ];
      expect(opened).toHaveLength(11);
      for (const result of opened) {
        expect(result.opened).toBe(true);
        // Waiters re-check by themselves only every 5 s: opening this soon came from the message.
        expect(result.at - lastCountDown).toBeLessThan(2_500);
      }
      expect(await admin().exists(name)).toBe(0);
    });

    it('await with a wait returns false while the count stays above zero, and leaves nothing behind', async () => {
      const name = 'latch:closed';
      const setter = client();
      await setter.getCountDownLatch(name).trySetCount(2);
      await setter.getCountDownLatch(name).countDown();
      const waiter = client();
      const controller = new AbortController();
      await expectWaitsLeaveNothing(waiter, controller, async () => {
        const started = performance.now();
        expect(await waiter.getCountDownLatch(name).await({ waitTime: 300, signal: controller.signal })).toBe(false);
        expect(performance.now() - started).toBeGreaterThanOrEqual(290);
        expect(await waiter.getCountDownLatch(name).await({ waitTime: 0 })).toBe(false);
        return { aborted: waiter.getCountDownLatch(name).await({ signal: controller.signal }) };
      });
      await expectUnsubscribed(latchChannel(name));
      expect(await deployment().keys()).toEqual([name]);
      expect(await waiter.getCountDownLatch(name).getCount()).toBe(1);
    });

    it('trySetCount sets only an open latch; countDown below zero is harmless; an open latch lets await through', async () => {
      const latch = client().getCountDownLatch('latch:set');
      expect(await latch.getCount()).toBe(0);
      expect(await latch.await()).toBe(true);
      expect(await latch.trySetCount(2)).toBe(true);
      expect(await latch.trySetCount(3)).toBe(false);
      expect(await latch.getCount()).toBe(2);
      await latch.countDown();
      await latch.countDown();
      expect(await admin().exists('latch:set')).toBe(0);
      await latch.countDown(); // unset: makes -1 and deletes it
      expect(await admin().exists('latch:set')).toBe(0);
      expect(await latch.trySetCount(1)).toBe(true);
      expect(await latch.delete()).toBe(true);
      expect(await latch.delete()).toBe(false);
    });

    it('publishes exactly what Redisson publishes, on its channel', async () => {
      // Classic pub/sub, which a plain subscriber hears on every topology; the messages are the same sharded.
      const latch = client({ shardedPubSub: 'off' }).getCountDownLatch('latch:wire');
      const subscriber = deployment().connect();
      const messages: [string, string][] = [];
      subscriber.on('message', (channel: string, message: string) => messages.push([channel, message]));
      await subscriber.subscribe('redisson_countdownlatch__channel__{latch:wire}');
      await latch.trySetCount(2); // 1
      await latch.countDown(); // nothing
      await latch.countDown(); // 0
      await latch.trySetCount(1); // 1
      await latch.delete(); // 1
      await delay(100);
      subscriber.disconnect();
      const channel = 'redisson_countdownlatch__channel__{latch:wire}';
      expect(messages).toEqual([[channel, '1'], [channel, '0'], [channel, '1'], [channel, '1']]);
    });

    it('a check made in the same run of code as an earlier one still reads this client\'s write between them', async () => {
      const latch = client().getCountDownLatch('latch:own-write');
      // Both scripts cached, so that the calls below reach Redis in the order they are made; then open.
      await latch.trySetCount(1);
      await latch.countDown();
      const before = latch.await({ waitTime: 0 });
      const set = latch.trySetCount(1);
      const after = latch.await({ waitTime: 0 });
      expect(await Promise.all([before, set, after])).toEqual([true, true, false]);
      expect(await latch.getCount()).toBe(1);
    });

    it("a wait joined in the same run as a check but after this client's write is not answered by that check", async () => {
      const latch = client().getCountDownLatch('latch:own-write-wait');
      await latch.trySetCount(1);
      await latch.countDown();
      // The first wait's check goes out at once and finds the latch open; the new count is written
      // after it, so the second wait needs a check of its own, which finds the latch closed.
      const before = latch.await({ waitTime: 10_000 });
      const set = latch.trySetCount(1);
      const after = latch.await({ waitTime: 300 });
      expect(await Promise.all([before, set, after])).toEqual([true, true, false]);
    });

    it("a client's waits on one latch wait together, each with its own wait time and signal", async () => {
      const name = 'latch:callers';
      const redisson = client();
      const latch = () => redisson.getCountDownLatch(name);
      await latch().trySetCount(1);
      const controller = new AbortController();
      const open = latch().await();
      const aborted = latch().await({ signal: controller.signal });
      const startedAt = performance.now();
      const timedOut = latch().await({ waitTime: 300 });
      await eventually(() => redisson.diagnostics().waiters === 3, 10_000, 'three parked waits');
      expect(await subscriberCount(latchChannel(name))).toBe(1);
      expect(await timedOut).toBe(false);
      expect(performance.now() - startedAt).toBeGreaterThanOrEqual(290);
      controller.abort(new Error('given up'));
      await expect(aborted).rejects.toThrow('given up');
      expect(redisson.diagnostics().waiters).toBe(1);
      const before = await deployment().commandCounts();
      await client().getCountDownLatch(name).countDown();
      expect(await open).toBe(true);
      // One GET answered the remaining wait.
      const gets = ((await deployment().commandCounts()).get('get') ?? 0) - (before.get('get') ?? 0);
      expect(gets).toBe(1);
      expect(redisson.diagnostics()).toEqual({ channels: 0, waiters: 0, leases: 0 });
      await expectUnsubscribed(latchChannel(name));
    });

    it('delete() opens the latch for waiters', async () => {
      const redisson = client();
      const latch = redisson.getCountDownLatch('latch:deleted');
      await latch.trySetCount(3);
      const waiting = client().getCountDownLatch('latch:deleted').await({ waitTime: 20_000 });
      await eventually(async () => (await subscriberCount(latchChannel('latch:deleted'))) === 1, 10_000, 'a subscriber');
      const deletedAt = performance.now();
      await latch.delete();
      expect(await waiting).toBe(true);
      expect(performance.now() - deletedAt).toBeLessThan(2_500);
    });

    it('the waiters a message wakes re-check with one GET; a new count\'s message releases none of them', async () => {
      const name = 'latch:shared-check';
      const setter = client();
      const redisson = client();
      // Both scripts cached, so that the two calls below reach Redis in the order they are made.
      await setter.getCountDownLatch(name).countDown();
      await setter.getCountDownLatch(name).trySetCount(1);
      const waiting = Array.from({ length: 50 }, () => redisson.getCountDownLatch(name).await());
      let released = 0;
      for (const wait of waiting) void wait.then(() => (released += 1));
      await eventually(() => redisson.diagnostics().waiters === 50, 10_000, '50 parked waiters');
      // A count-down to zero and a new count at once: by the time the waiters' re-check runs the
      // latch is closed again, and the message of the new count reopens nothing.
      const before = await deployment().commandCounts();
      await Promise.all([setter.getCountDownLatch(name).countDown(), setter.getCountDownLatch(name).trySetCount(1)]);
      await eventually(() => redisson.diagnostics().waiters === 50, 10_000, 'the waiters to park again');
      await delay(50);
      expect(released).toBe(0);
      // Each message woke all 50 (or left them a wake-up each); each time one GET answered for all,
      // and no wake-up was kept for a waiter that needed none (which would send it to check alone).
      const gets = ((await deployment().commandCounts()).get('get') ?? 0) - (before.get('get') ?? 0);
      expect(gets).toBe(2);
      await setter.getCountDownLatch(name).countDown();
      expect(await Promise.all(waiting)).toEqual(Array.from({ length: 50 }, () => true));
    });

    it('rejects bad input before sending anything; shutdown rejects waiters and leaves nothing', async () => {
      const redisson = client();
      const latch = redisson.getCountDownLatch('latch:input');
      const before = await deployment().commandCounts();
      for (const count of [0, -1, 1.5, 2 ** 31, Number.NaN, '2']) {
        await expect(latch.trySetCount(count as never)).rejects.toBeInstanceOf(InvalidArgumentError);
      }
      for (const options of [{ waitTime: -1 }, { waitTime: 0.5 }, { wait: 1 }, { signal: {} }]) {
        await expect(latch.await(options as never)).rejects.toBeInstanceOf(InvalidArgumentError);
      }
      const after = await deployment().commandCounts();
      for (const command of ['evalsha', 'eval', 'get', 'subscribe']) expect(after.get(command) ?? 0).toBe(before.get(command) ?? 0);
      await latch.trySetCount(1);
      const parked = latch.await();
      await eventually(() => redisson.diagnostics().waiters === 1, 5_000, 'a parked waiter');
      await redisson.shutdown();
      await expect(parked).rejects.toBeInstanceOf(ClientClosedError);
      expect(redisson.diagnostics()).toEqual({ channels: 0, waiters: 0, leases: 0 });
      await expectUnsubscribed(latchChannel('latch:input'));
    });
  });
}
