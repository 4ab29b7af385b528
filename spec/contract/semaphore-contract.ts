import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import {
  ClientClosedError,
  InvalidArgumentError,
  LockAcquireTimeoutError,
  type PermitHandle,
  type RedissonClient,
} from '../../lib';
import { semaphoreChannel } from '../../lib/keys';
import { delay } from '../helpers/fixture';
import { eventually } from '../helpers/redis-server';
import { expectWaitsLeaveNothing } from '../helpers/clean-up';
import { STANDALONE, useTopology } from '../helpers/topology';
import type { ContractFixture } from './lock-contract';

/** What the contract drives: the surface both semaphores share. */
export interface SemaphoreUnderTest {
  acquire(permits?: number, options?: { waitTime?: number; signal?: AbortSignal }): Promise<PermitHandle>;
  tryAcquire(permits?: number, options?: { waitTime?: number; signal?: AbortSignal }): Promise<PermitHandle | null>;
  trySetPermits(permits: number): Promise<boolean>;
  addPermits(permits: number): Promise<void>;
  availablePermits(): Promise<number>;
}

/** A semaphore kind as the contract drives it. */
export interface SemaphoreKindUnderTest {
  /** Name in test titles. */
  kind: string;
  /** Factory on the client, e.g. `getSemaphore`; child processes use it too. */
  factory: string;
}

const WORKER = join(__dirname, 'fixtures', 'semaphore-worker.mjs');

/**
 * The semaphore contract (DESIGN section 8), on real Redis: what every semaphore kind must do. A
 * kind joins by calling this from a spec file of its own; on another topology, by calling it with
 * that file's fixture (`useTopology(clusterTopology())`), which several kinds may share.
 */
export function semaphoreContract(subject: SemaphoreKindUnderTest, fixture: ContractFixture = useTopology(STANDALONE)): void {
  const { client, deployment } = fixture;
  const admin = () => deployment().admin();
  const commandCounts = () => deployment().commandCounts();
  const subscriberCount = (channel: string) => deployment().subscribers(channel);
  const expectUnsubscribed = (channel: string) =>
    eventually(async () => (await subscriberCount(channel)) === 0, 5_000, `no subscriber on ${channel}`);
  const of = (redisson: RedissonClient, name: string) =>
    (redisson as unknown as Record<string, (name: string) => SemaphoreUnderTest>)[subject.factory]!.call(redisson, name);
  const keys = () => deployment().keys();

  const where = fixture.name === STANDALONE.name ? '' : ` (${fixture.name})`;
  describe(`${subject.kind}: the semaphore contract${where}`, () => {
    it('3 permits shared by 10 workers in 3 processes: never more than 3 holders, waiters woken by message', async () => {
      const name = 'contract:pool';
      expect(await of(client(), name).trySetPermits(3)).toBe(true);
      const started = performance.now();
      const workers = [4, 3, 3].map((count) =>
        spawn(process.execPath, [WORKER, deployment().target, subject.factory, name, String(count), '8'], {
          stdio: ['ignore', 'pipe', 'pipe'],
          env: process.env,
        }),
      );
      const stdout = workers.map(() => [] as string[]);
      const stderr: string[] = [];
      workers.forEach((worker, i) => {
        worker.stdout.on('data', (chunk: Buffer) => stdout[i]!.push(chunk.toString()));
        worker.stderr.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
      });
      const codes = await Promise.all(workers.map(async (worker) => (await once(worker, 'exit'))[0] as number));
      const elapsed = performance.now() - started;
      expect(stderr.join('')).toBe('');
      expect(codes).toEqual([0, 0, 0]);
      // The workers' counters carry the semaphore's name as hash tag (one slot in a cluster).
      expect(await admin().get(`{${name}}:max-holders`)).toBe('3');
      expect(await admin().get(`{${name}}:holders`)).toBe('0');
      expect(await of(client(), name).availablePermits()).toBe(3);
      // 80 sections of 15 ms, 3 at a time, take about 0.4 s of holding. Waiters left to the 5 s
      // re-check instead of the release messages would wait seconds each, and the run would take
      // minutes; bounds well under that, generous for a loaded machine.
      const longest = Math.max(...stdout.map((chunks) => (JSON.parse(chunks.join('')) as { longestWait: number }).longestWait));
      expect(longest).toBeLessThan(4_000);
      expect(elapsed).toBeLessThan(30_000);
    });

    it('wakes a waiter of another client by message, well before any re-check', async () => {
      const name = 'contract:wake';
      const holder = client();
      const waiter = client();
      await of(holder, name).trySetPermits(1);
      const held = await of(holder, name).acquire();
      const waiting = of(waiter, name).tryAcquire(1, { waitTime: 25_000 });
      await eventually(() => waiter.diagnostics().waiters === 1, 10_000, 'a parked waiter');
      expect(await subscriberCount(semaphoreChannel(name))).toBe(1);
      const releasedAt = performance.now();
      await held.release();
      const handle = await waiting;
      expect(handle).not.toBeNull();
      // The waiter re-checks by itself only after 5 s: a wake this soon came from the message.
      expect(performance.now() - releasedAt).toBeLessThan(2_500);
      await handle!.release();
      await expectUnsubscribed(semaphoreChannel(name));
    });

    it('a release of 3 permits wakes 3 local waiters at once', async () => {
      const name = 'contract:three';
      const holder = client();
      const waiter = client();
      await of(holder, name).trySetPermits(3);
      const held = await of(holder, name).acquire(3);
      const waiting = [1, 2, 3].map(() => of(waiter, name).acquire(1, { waitTime: 25_000 }));
      await eventually(() => waiter.diagnostics().waiters === 3, 10_000, 'three parked waiters');
      const releasedAt = performance.now();
      await held.release();
      const handles = await Promise.all(waiting);
      expect(performance.now() - releasedAt).toBeLessThan(2_500);
      expect(await of(holder, name).availablePermits()).toBe(0);
      await Promise.all(handles.map((handle) => handle.release()));
      expect(await of(holder, name).availablePermits()).toBe(3);
    });

    it('a newcomer queues behind local waiters wanting no more than it, and tries once behind those wanting more', async () => {
      const name = 'contract:join';
      const holder = client();
      const waiter = client();
      await of(holder, name).trySetPermits(3);
      const held = await of(holder, name).acquire(3);
      const first = of(waiter, name).acquire(2, { waitTime: 25_000 });
      await eventually(() => waiter.diagnostics().waiters === 1, 10_000, 'a parked waiter');
      const before = await commandCounts();
      // Two more wanting 2 queue behind it without an attempt.
      const queued = [1, 2].map(() => of(waiter, name).acquire(2, { waitTime: 25_000 }));
      await eventually(() => waiter.diagnostics().waiters === 3, 10_000, 'three parked waiters');
      // One wanting 1 may be served before them: it tries once, and not again after joining the
      // subscription (its share hears every release after that attempt); two more queue behind it.
      const tried = of(waiter, name).acquire(1, { waitTime: 25_000 });
      await eventually(() => waiter.diagnostics().waiters === 4, 10_000, 'four parked waiters');
      const behind = [1, 2].map(() => of(waiter, name).acquire(1, { waitTime: 25_000 }));
      await eventually(() => waiter.diagnostics().waiters === 6, 10_000, 'six parked waiters');
      const after = await commandCounts();
      const sent = (command: string) => (after.get(command) ?? 0) - (before.get(command) ?? 0);
      expect(sent('evalsha') + sent('eval')).toBe(1);
      expect(sent('subscribe') + sent('ssubscribe')).toBe(0);
      const done = [first, ...queued, tried, ...behind].map((waiting) => waiting.then((handle) => handle.release()));
      await held.release();
      await Promise.all(done);
      expect(await of(holder, name).availablePermits()).toBe(3);
    });

    it('a waiter for several permits gets them once enough are released one by one', async () => {
      const name = 'contract:multi';
      const redisson = client();
      await of(redisson, name).trySetPermits(2);
      const held = [await of(redisson, name).acquire(), await of(redisson, name).acquire()];
      const waiting = of(client(), name).acquire(2, { waitTime: 25_000 });
      await delay(100);
      const releasedAt = performance.now();
      await held[0]!.release();
      await held[1]!.release();
      const handle = await waiting;
      expect(performance.now() - releasedAt).toBeLessThan(2_500);
      expect(handle.permits).toBe(2);
      await handle.release();
    });

    it('a handle gives its permits back exactly once', async () => {
      const name = 'contract:once';
      const redisson = client();
      await of(redisson, name).trySetPermits(2);
      const handle = await of(redisson, name).acquire(2);
      expect(handle.permits).toBe(2);
      expect(await of(redisson, name).availablePermits()).toBe(0);
      await handle.release();
      await handle.release();
      await handle[Symbol.asyncDispose]();
      expect(handle.released).toBe(true);
      expect(await of(redisson, name).availablePermits()).toBe(2);
      expect(await of(redisson, name).tryAcquire(3)).toBeNull();
    });

    it('leaves no subscription, key, timer or listener after a time-out and an abort', async () => {
      const name = 'contract:busy';
      const holder = client();
      const waiter = client();
      await of(holder, name).trySetPermits(1);
      const held = await of(holder, name).acquire();
      const keysWhileHeld = await keys();
      const controller = new AbortController();
      await expectWaitsLeaveNothing(waiter, controller, async () => {
        const semaphore = of(waiter, name);
        expect(await semaphore.tryAcquire(1, { waitTime: 50, signal: controller.signal })).toBeNull();
        await expect(semaphore.acquire(1, { waitTime: 50 })).rejects.toBeInstanceOf(LockAcquireTimeoutError);
        return { aborted: semaphore.acquire(1, { signal: controller.signal }) };
      });
      await expectUnsubscribed(semaphoreChannel(name));
      expect(await keys()).toEqual(keysWhileHeld);
      await held.release();
      expect(await of(holder, name).availablePermits()).toBe(1);
    });

    it('never keeps permits behind the back of a caller who aborted while its attempt was in flight', async () => {
      const name = 'contract:late';
      const redisson = client();
      await of(redisson, name).trySetPermits(1);
      const controller = new AbortController();
      const reason = new Error('gave up');
      const pending = of(redisson, name).acquire(1, { signal: controller.signal });
      controller.abort(reason);
      await expect(pending).rejects.toBe(reason);
      await eventually(async () => (await of(redisson, name).availablePermits()) === 1, 5_000, 'the permit given back');
    });

    it('rejects bad input with InvalidArgumentError before sending anything', async () => {
      const redisson = client();
      const semaphore = of(redisson, 'contract:input');
      // Let what earlier tests left in flight (a give-back, a batched DEL) land before the window.
      let before = await commandCounts();
      for (let settled = false; !settled; ) {
        await delay(50);
        const now = await commandCounts();
        settled = ['evalsha', 'eval', 'get', 'del'].every((command) => now.get(command) === before.get(command));
        before = now;
      }
      for (const permits of [-1, 1.5, 2 ** 31, Number.NaN, '1']) {
        await expect(semaphore.acquire(permits as never)).rejects.toBeInstanceOf(InvalidArgumentError);
        await expect(semaphore.tryAcquire(permits as never)).rejects.toBeInstanceOf(InvalidArgumentError);
        await expect(semaphore.trySetPermits(permits as never)).rejects.toBeInstanceOf(InvalidArgumentError);
      }
      for (const delta of [1.5, 2 ** 31, -(2 ** 31), Number.POSITIVE_INFINITY]) {
        await expect(semaphore.addPermits(delta)).rejects.toBeInstanceOf(InvalidArgumentError);
      }
      for (const options of [{ waitTime: -1 }, { waitTime: 1.5 }, { waitTime: 2 ** 31 }, { lease: 1 }, { signal: 'x' }]) {
        await expect(semaphore.acquire(1, options as never)).rejects.toBeInstanceOf(InvalidArgumentError);
        await expect(semaphore.tryAcquire(1, options as never)).rejects.toBeInstanceOf(InvalidArgumentError);
      }
      expect(() => of(redisson, '')).toThrow(InvalidArgumentError);
      expect(() => of(redisson, 'a}b')).toThrow(InvalidArgumentError);
      const after = await commandCounts();
      for (const command of ['evalsha', 'eval', 'get', 'subscribe']) {
        expect(after.get(command) ?? 0).toBe(before.get(command) ?? 0);
      }
    });

    it('on shutdown rejects parked waiters and leaves nothing running', async () => {
      const name = 'contract:shutdown';
      const other = client();
      await of(other, name).trySetPermits(1);
      await of(other, name).acquire();
      const redisson = client();
      const parked = of(redisson, name).acquire();
      await eventually(() => redisson.diagnostics().waiters === 1, 5_000, 'a parked waiter');
      await redisson.shutdown();
      await expect(parked).rejects.toBeInstanceOf(ClientClosedError);
      expect(redisson.diagnostics()).toEqual({ channels: 0, waiters: 0, leases: 0 });
      await expectUnsubscribed(semaphoreChannel(name));
      expect(() => of(redisson, name)).toThrow(ClientClosedError);
    });
  });
}
