import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { getEventListeners } from 'node:events';
import { join } from 'node:path';
import { LockAcquireTimeoutError } from '../lib';
import { delay, useRedis } from './helpers/fixture';
import { eventually, expectUnsubscribed } from './helpers/redis-server';
import { trackTimers } from './helpers/timers';

const { admin, client, server } = useRedis();

describe('nothing left behind', () => {
  it('leaves no timer, listener, subscription or lease after time-outs, aborts and releases', async () => {
    const holder = client();
    const waiter = client();
    const held = await holder.getLock('busy').acquire({ leaseTime: 30_000 });
    const controller = new AbortController();
    const timers = trackTimers();
    try {
      expect(await waiter.getLock('busy').tryLock({ waitTime: 50, signal: controller.signal })).toBe(false);
      await expect(waiter.getLock('busy').acquire({ waitTime: 50 })).rejects.toBeInstanceOf(LockAcquireTimeoutError);
      const aborted = waiter.getLock('busy').lock({ signal: controller.signal });
      await eventually(() => waiter.diagnostics().waiters === 1, 5_000, 'a parked waiter');
      controller.abort(new Error('stop'));
      await expect(aborted).rejects.toThrow('stop');
      const handle = await waiter.getLock('free').acquire();
      await handle.release();
      // Only short-lived timers may remain (the batched latch deletion, 20 ms); none may linger.
      expect(await timers.settle()).toBe(0);
    } finally {
      timers.stop();
    }
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(waiter.diagnostics()).toEqual({ channels: 0, waiters: 0, leases: 0 });
    await expectUnsubscribed(admin(), 'redisson_lock__channel:{busy}');
    await held.release();
  });

  it('never takes a lock behind the back of a caller who aborted while its attempt was in flight', async () => {
    const redisson = client();
    const controller = new AbortController();
    const reason = new Error('gave up');
    const pending = redisson.getLock('late').lock({ signal: controller.signal });
    controller.abort(reason); // the acquire script is already on its way and will succeed
    await expect(pending).rejects.toBe(reason);
    // The attempt may still land after the rejection; it is then taken back.
    await eventually(async () => (await admin().exists('late')) === 0, 5_000, 'no hold left behind');
    expect(redisson.diagnostics().leases).toBe(0);
  });

  it('gives no MaxListenersExceededWarning with many waiters on one client', async () => {
    const redisson = client();
    const emitWarning = jest.spyOn(process, 'emitWarning');
    try {
      const held = await redisson.getLock('crowd').acquire();
      const waiters = Array.from({ length: 30 }, () => redisson.getLock('crowd').acquire().then((h) => h.release()));
      await eventually(() => redisson.diagnostics().waiters === 30, 5_000, 'thirty parked waiters');
      await held.release();
      await Promise.all(waiters);
      const names = emitWarning.mock.calls.map(([warning]) => (warning instanceof Error ? warning.name : String(warning)));
      expect(names.filter((name) => name.includes('MaxListeners'))).toEqual([]);
    } finally {
      emitWarning.mockRestore();
    }
  });

  it('tells holders on shutdown that their locks are no longer theirs to rely on', async () => {
    const redisson = client();
    const lost: string[] = [];
    redisson.on('lockLost', ({ name }) => lost.push(name));
    const handle = await redisson.getLock('held-at-shutdown').acquire();
    await redisson.shutdown();
    expect(handle.signal.aborted).toBe(true);
    expect(handle.signal.reason).toMatchObject({ code: 'ERR_LOCK_LOST', message: expect.stringMatching(/shut down/) });
    expect(lost).toEqual(['held-at-shutdown']);
    expect(redisson.diagnostics().leases).toBe(0);
  });

  it('rejects pending waits with ClientClosedError on shutdown and refuses later calls', async () => {
    const holder = client();
    const waiter = client();
    await holder.getLock('closing').lock({ leaseTime: 30_000 });
    const waiting = waiter.getLock('closing').lock();
    await eventually(() => waiter.diagnostics().waiters === 1, 5_000, 'a parked waiter');
    const lock = waiter.getLock('closing');
    await waiter.shutdown();
    await expect(waiting).rejects.toMatchObject({ code: 'ERR_CLIENT_CLOSED' });
    await expect(lock.tryLock()).rejects.toMatchObject({ code: 'ERR_CLIENT_CLOSED' });
    expect(() => waiter.getLock('other')).toThrow(/shut down/);
    await waiter.shutdown();
    await delay(50);
    await expectUnsubscribed(admin(), 'redisson_lock__channel:{closing}');
  });

  it('leaves no timer behind when shutdown closes a parked waiter whose channel would linger', async () => {
    const holder = client();
    const waiter = client({ fairLockChannelLinger: 60_000 });
    await holder.getFairLock('closing-linger').lock({ leaseTime: 30_000 });
    const timers = trackTimers();
    try {
      // A given owner's fair-lock channel lingers after its wait (a fresh owner's goes at once).
      const waiting = waiter.getFairLock('closing-linger').lock({ threadId: 7 });
      await eventually(() => waiter.diagnostics().waiters === 1, 5_000, 'a parked waiter');
      await waiter.shutdown();
      await expect(waiting).rejects.toMatchObject({ code: 'ERR_CLIENT_CLOSED' });
      expect(await timers.settle()).toBe(0);
    } finally {
      timers.stop();
    }
  });

  it('lets the process exit by itself after shutdown() and closing its own connection', async () => {
    const script = `
      const Redis = require('ioredis');
      const { RedissonClient } = require(${JSON.stringify(join(__dirname, '..', 'dist', 'index.js'))});
      (async () => {
        const redis = new Redis(${JSON.stringify(server().url)});
        const redisson = new RedissonClient(redis, { lockWatchdogTimeout: 3000 });
        const lock = redisson.getLock('exit-test');
        await lock.lock();
        const waiting = redisson.getLock('exit-test').tryLock({ waitTime: 100 });
        await waiting;
        await lock.unlock();
        await redisson.getLock('exit-test-2').lock();
        await redisson.shutdown();
        await redis.quit();
        console.log('done');
      })();`;
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    const [code, signal] = await once(child, 'exit');
    clearTimeout(timer);
    expect({ code, signal, output: output.trim() }).toEqual({ code: 0, signal: null, output: 'done' });
  });
});
