import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import type { RedisOptions } from 'ioredis';
import {
  InvalidArgumentError,
  LockAcquireTimeoutError,
  LockLostError,
  LockNotHeldError,
  type BaseLock,
  type RedissonClient,
  type RedissonEvents,
} from '../../lib';
import type { RedisConnection } from '../../lib';
import { delay } from '../helpers/fixture';
import { eventually } from '../helpers/redis-server';
import { expectWaitsLeaveNothing } from '../helpers/clean-up';
import { STANDALONE, useTopology } from '../helpers/topology';

/** A lock kind as the contract drives it. */
export interface LockKindUnderTest {
  /** Name in test titles, e.g. `RLock`. */
  kind: string;
  /**
   * Path of factory calls on the client that makes the lock, e.g. `getLock` or
   * `getReadWriteLock.writeLock`; child processes use it too.
   */
  factory: string;
  /** The factory's arguments after the name, for a kind made from more (a group multi-lock's values). */
  args?: readonly unknown[];
  /** The channel a waiter on `name` subscribes to; `undefined` for a kind that never subscribes. */
  channel(name: string): string | undefined;
  /**
   * For a kind whose waiters each listen on a channel of their own (the fair lock): the channel of
   * the waiter `owner` on `name`. The contract passes a glob owner (`<clientId>:*`) to find a
   * client's waiter channels with PUBSUB CHANNELS, and checks that nobody listens on `channel(name)`.
   */
  waiterChannel?(name: string, owner: string): string;
  /** Whether the owner re-enters (false: a second acquire by the holder fails). */
  reentrant: boolean;
  /**
   * For a shared lock (a read lock): holders of other owners share it, so wherever the contract
   * needs a holder that keeps others out, the lock `excludedBy` names (a factory path, e.g.
   * `getReadWriteLock.writeLock`) holds instead, and exclusion is checked against that lock.
   */
  shared?: { excludedBy: string };

  /**
   * Keys the kind keeps on purpose after the lock is released (the fenced lock's token counter,
   * which never expires); the leftover checks ignore them.
   */
  keeps?(name: string): string[];
  /** Connection options of every client in the run (e.g. `stringNumbers`). */
  connection?: RedisOptions;
  /** A Redis user every client of the run (child processes too) logs in as; see `prepare`. */
  user?: { username: string; password: string };
  /** Runs once against the server before the tests (e.g. to create `user`). */
  prepare?(admin: RedisConnection): Promise<unknown>;
}

const WORKER = join(__dirname, 'fixtures', 'lock-worker.mjs');

/** Makes the lock `subject.factory` names on `client`. */
export function lockOf(client: RedissonClient, subject: LockKindUnderTest, name: string): BaseLock {
  const [factory, ...views] = subject.factory.split('.');
  let lock = (client as unknown as Record<string, (name: string, ...args: unknown[]) => unknown>)[factory!]!.call(client, name, ...(subject.args ?? []));
  for (const view of views) lock = (lock as Record<string, () => unknown>)[view]!.call(lock);
  return lock as BaseLock;
}

/** Where a contract runs: the per-file deployment made by `useTopology`. */
export type ContractFixture = ReturnType<typeof useTopology>;

/**
 * The lock contract (DESIGN section 8): what every lock kind must do, on real Redis. A kind joins by
 * calling this from a spec file of its own; on another topology, by calling it with that file's
 * fixture (`useTopology(clusterTopology())`), which several kinds may share.
 */
export function lockContract(subject: LockKindUnderTest, fixture: ContractFixture = useTopology(STANDALONE)): void {
  const { client, deployment } = fixture;
  const make = (options?: Parameters<typeof client>[0]) => client(options, { ...subject.connection, ...subject.user });
  const admin = () => deployment().admin();
  const commandCounts = () => deployment().commandCounts();
  const subscriberCount = (channel: string) => deployment().subscribers(channel);
  const expectUnsubscribed = (channel: string) =>
    eventually(async () => (await subscriberCount(channel)) === 0, 5_000, `no subscriber on ${channel}`);
  /** Where child processes connect: the deployment's target, with the run's user in a URL target. */
  const url = () => {
    const target = deployment().target;
    if (!subject.user) return target;
    if (target.startsWith('{')) return JSON.stringify({ ...JSON.parse(target) as object, ...subject.user });
    const base = new URL(target);
    [base.username, base.password] = [subject.user.username, subject.user.password];
    return base.toString();
  };
  if (subject.prepare) beforeAll(() => subject.prepare!(admin()));
  const lockOn = (redisson: RedissonClient, name: string) => lockOf(redisson, subject, name);
  /** A lock on `name` that keeps the subject out: the subject itself, or its excluder when shared. */
  const blockerOn = (redisson: RedissonClient, name: string) =>
    subject.shared ? lockOf(redisson, { ...subject, factory: subject.shared.excludedBy }, name) : lockOn(redisson, name);

  /** Keys in Redis now, unlock latches included, sorted; without those the kind keeps on purpose. */
  const keys = async () => {
    const kept = new Set(['contract:counter-lock', 'contract:busy'].flatMap((name) => subject.keeps?.(name) ?? []));
    return (await deployment().keys()).filter((key) => !kept.has(key)).sort();
  };

  /** Channels of `redisson`'s own waiters on `name` that have a subscriber now (per-waiter kinds). */
  const waiterChannels = async (redisson: RedissonClient, name: string) =>
    deployment().channels(subject.waiterChannel!(name, `${redisson.id}:*`));

  /** Waits until no waiter of `redisson` listens for releases of `name` any more. */
  const expectNoListener = async (redisson: RedissonClient, name: string) => {
    const channel = subject.channel(name);
    if (channel) await expectUnsubscribed(channel);
    if (subject.waiterChannel) {
      await eventually(async () => (await waiterChannels(redisson, name)).length === 0, 5_000, `no waiter channel of ${name}`);
    }
  };

  const where = fixture.name === STANDALONE.name ? '' : ` (${fixture.name})`;
  describe(`${subject.kind}: the lock contract${where}`, () => {
    const exclusion = subject.shared
      ? 'excludes across 4 processes: 2 x 50 increments under the excluder lose no update, 2 x 50 holds never see one'
      : 'excludes across 4 processes: 4 x 50 read-modify-write increments lose no update';
    it(exclusion, async () => {
      // A shared lock's holders would race each other's increments: two processes increment under
      // the excluder, and two check, holding the subject, that the counter never moves meanwhile.
      const roles = subject.shared
        ? [subject.shared.excludedBy, subject.shared.excludedBy, subject.factory, subject.factory]
        : [subject.factory, subject.factory, subject.factory, subject.factory];
      const modes = subject.shared ? ['increment', 'increment', 'observe', 'observe'] : ['increment', 'increment', 'increment', 'increment'];
      const workers = roles.map((factory, i) =>
        // The test's environment, not the worker process's (a deployment may set e.g. NODE_EXTRA_CA_CERTS).
        spawn(process.execPath, [WORKER, url(), '50', factory, 'contract:counter-lock', 'contract:counter', modes[i]!, JSON.stringify(subject.args ?? [])], {
          stdio: ['ignore', 'ignore', 'pipe'],
          env: process.env,
        }),
      );
      const stderr: string[] = [];
      for (const worker of workers) worker.stderr.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
      const codes = await Promise.all(workers.map(async (worker) => (await once(worker, 'exit'))[0] as number));
      expect(stderr.join('')).toBe('');
      expect(codes).toEqual([0, 0, 0, 0]);
      expect(await admin().get('contract:counter')).toBe(subject.shared ? '100' : '200');
      await eventually(async () => (await keys()).join() === 'contract:counter', 5_000, 'nothing but the counter left');
    });

    it('holds, reports and releases: isLocked, hold count, TTL, and free afterwards', async () => {
      const redisson = make();
      const lock = lockOn(redisson, 'contract:state');
      const handle = await lock.acquire({ leaseTime: 20_000 });
      expect(await lock.isLocked()).toBe(true);
      expect(await lock.isHeldByThread(handle.threadId)).toBe(true);
      expect(await lock.getHoldCount({ threadId: handle.threadId })).toBe(1);
      const ttl = await lock.remainTimeToLive();
      expect(ttl).toBeGreaterThan(10_000);
      expect(ttl).toBeLessThanOrEqual(20_000);
      const otherClient = make();
      const other = blockerOn(otherClient, 'contract:state');
      expect(await other.tryLock()).toBe(false);
      if (subject.shared) {
        // Another owner shares it, and both count.
        const sharer = lockOn(otherClient, 'contract:state');
        const shared = await sharer.tryAcquire();
        expect(shared).not.toBeNull();
        expect(await sharer.isHeldByThread(shared!.threadId)).toBe(true);
        await shared!.release();
        expect(await lock.isLocked()).toBe(true);
      }
      await handle.release();
      expect(await lock.isLocked()).toBe(false);
      expect(await lock.remainTimeToLive()).toBe(-2);
      expect(await other.tryLock()).toBe(true);
      await other.unlock();
    });

    const ownerScope = subject.reentrant
      ? 'an owner scope re-enters, and the lock is free after as many releases'
      : 'the holder cannot take it again, within its owner scope or not';
    it(ownerScope, async () => {
      const redisson = make();
      const lock = lockOn(redisson, 'contract:scope');
      await redisson.run(async () => {
        await lock.lock();
        if (subject.reentrant) {
          expect(await lock.tryLock()).toBe(true);
          expect(await lock.getHoldCount()).toBe(2);
          await lock.unlock();
        } else {
          // At once, with the shared typed error: not a wait for itself, not a re-entry.
          const startedAt = performance.now();
          await expect(lock.tryLock({ waitTime: 5_000 })).rejects.toMatchObject({ code: 'ERR_LOCK_REENTRY' });
          expect(performance.now() - startedAt).toBeLessThan(2_500);
          expect(await lock.getHoldCount()).toBe(1);
        }
        await lock.unlock();
      });
      expect(await lock.isLocked()).toBe(false);
      await expect(lock.unlock({ threadId: 1 })).rejects.toBeInstanceOf(LockNotHeldError);
    });

    if (subject.channel('x') !== undefined) {
      it('wakes a waiter of another client by message, well before the holder lease would end', async () => {
        const holder = make();
        const waiter = make();
        const held = await blockerOn(holder, 'contract:wake').acquire({ leaseTime: 30_000 });
        const waiting = lockOn(waiter, 'contract:wake').tryLock({ waitTime: 25_000 });
        await eventually(() => waiter.diagnostics().waiters === 1, 10_000, 'a parked waiter');
        if (subject.waiterChannel) {
          // One channel of the waiter's own, one subscriber; the shared channel stays silent.
          const own = await waiterChannels(waiter, 'contract:wake');
          expect(own).toHaveLength(1);
          expect(await subscriberCount(own[0]!)).toBe(1);
          expect(await subscriberCount(subject.channel('contract:wake')!)).toBe(0);
        } else {
          expect(await subscriberCount(subject.channel('contract:wake')!)).toBe(1);
        }
        const releasedAt = performance.now();
        await held.release();
        expect(await waiting).toBe(true);
        // Far below the 30 s lease: only the release message can have woken it this soon.
        expect(performance.now() - releasedAt).toBeLessThan(10_000);
        await lockOn(waiter, 'contract:wake').unlock();
        await expectNoListener(waiter, 'contract:wake');
      });
    } else {
      it('waits without any subscription, and takes the lock once it is free', async () => {
        const holder = make();
        const waiter = make();
        const held = await blockerOn(holder, 'contract:spin').acquire({ leaseTime: 30_000 });
        const before = await commandCounts();
        const waiting = lockOn(waiter, 'contract:spin').tryLock({ waitTime: 20_000 });
        await delay(300);
        await held.release();
        expect(await waiting).toBe(true);
        const after = await commandCounts();
        for (const command of ['subscribe', 'ssubscribe']) expect(after.get(command) ?? 0).toBe(before.get(command) ?? 0);
        await lockOn(waiter, 'contract:spin').unlock();
      });
    }

    it('leaves no subscription, key, timer or listener after a time-out and an abort', async () => {
      const holder = make();
      const waiter = make();
      const held = await blockerOn(holder, 'contract:busy').acquire({ leaseTime: 30_000 });
      const keysWhileHeld = await keys();
      const controller = new AbortController();
      await expectWaitsLeaveNothing(waiter, controller, async () => {
        const lock = lockOn(waiter, 'contract:busy');
        expect(await lock.tryLock({ waitTime: 50, signal: controller.signal })).toBe(false);
        await expect(lock.acquire({ waitTime: 50 })).rejects.toBeInstanceOf(LockAcquireTimeoutError);
        return { aborted: lock.lock({ signal: controller.signal }) };
      });
      await expectNoListener(waiter, 'contract:busy');
      expect(await keys()).toEqual(keysWhileHeld); // the waiter left nothing of its own
      await held.release();
      await eventually(async () => (await keys()).length === 0, 5_000, 'no key left');
    });

    it('keeps a watchdog lease alive across many leases, then tells the holder when it is lost', async () => {
      const redisson = make({ lockWatchdogTimeout: 1_000 });
      const lock = lockOn(redisson, 'contract:lost');
      const lost: RedissonEvents['lockLost'][] = [];
      redisson.on('lockLost', (event) => lost.push(event));
      const handle = await lock.acquire();
      await delay(2_500); // 2.5 leases
      expect(handle.signal.aborted).toBe(false);
      expect(await lock.isLocked()).toBe(true);
      expect(await lock.forceUnlock()).toBe(true); // behind the holder's back, as another process would
      await eventually(() => handle.signal.aborted, 5_000, 'the handle signal to abort');
      expect(handle.signal.reason).toBeInstanceOf(LockLostError);
      expect(lost).toHaveLength(1);
      expect(lost[0]!.name).toBe('contract:lost');
      await expect(handle.release()).rejects.toBeInstanceOf(LockNotHeldError);
      expect(redisson.diagnostics().leases).toBe(0);
    });

    it('reports a lease lost behind its back by the watchdog, not only by forceUnlock', async () => {
      const redisson = make({ lockWatchdogTimeout: 600 });
      const handle = await lockOn(redisson, 'contract:deleted').acquire();
      await admin().del('contract:deleted');
      await eventually(() => handle.signal.aborted, 5_000, 'the renewal round to find it gone');
      expect(handle.signal.reason).toBeInstanceOf(LockLostError);
      await expect(handle.release()).rejects.toBeInstanceOf(LockNotHeldError);
    });

    it('rejects bad input with InvalidArgumentError before sending anything', async () => {
      const redisson = make();
      const lock = lockOn(redisson, 'contract:input');
      const before = await commandCounts();
      for (const options of [{ waitTime: -1 }, { leaseTime: 0 }, { threadId: 0 }, { waitTime: 1.5 }, { lease: 1 }]) {
        await expect(lock.tryLock(options as never)).rejects.toBeInstanceOf(InvalidArgumentError);
        await expect(lock.acquire(options as never)).rejects.toBeInstanceOf(InvalidArgumentError);
      }
      await expect(lock.isHeldByThread(-1)).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(lock.using('no function' as never)).rejects.toBeInstanceOf(InvalidArgumentError);
      expect(() => lockOn(redisson, '')).toThrow(InvalidArgumentError);
      expect(() => lockOn(redisson, 'a}b')).toThrow(InvalidArgumentError);
      const after = await commandCounts();
      for (const command of ['evalsha', 'eval', 'subscribe', 'hexists']) {
        expect(after.get(command) ?? 0).toBe(before.get(command) ?? 0);
      }
    });

    it('on shutdown reports held locks lost and leaves nothing running', async () => {
      const redisson = make();
      const lost: string[] = [];
      redisson.on('lockLost', (event) => lost.push(event.name));
      const handle = await lockOn(redisson, 'contract:shutdown').acquire();
      const other = make();
      await blockerOn(other, 'contract:shutdown2').acquire({ leaseTime: 30_000 });
      const parked = lockOn(redisson, 'contract:shutdown2').lock();
      await eventually(() => redisson.diagnostics().waiters + redisson.diagnostics().leases >= 1, 5_000, 'a waiter');
      await redisson.shutdown();
      await expect(parked).rejects.toThrow(/shut down/);
      expect(handle.signal.reason).toBeInstanceOf(LockLostError);
      expect(lost).toEqual(['contract:shutdown']);
      expect(redisson.diagnostics()).toEqual({ channels: 0, waiters: 0, leases: 0 });
      await expectNoListener(redisson, 'contract:shutdown2');
    });
  });
}
