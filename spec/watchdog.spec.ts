import Redis from 'ioredis';
import { LockLostError, LockNotHeldError, RedissonClient, type RedissonEvents } from '../lib';
import { RENEWAL_CALLS_IN_FLIGHT } from '../lib/kernel/leases/tracker';
import { delay, useRedis } from './helpers/fixture';
import { ChaosProxy } from './helpers/proxy';
import { commandCounts, commandsBetween, eventually } from './helpers/redis-server';

const { server, admin, client } = useRedis();

/** Script calls (EVALSHA and EVAL) seen by the server so far. */
async function scriptCalls(): Promise<number> {
  const counts = await commandCounts(admin());
  return (counts.get('evalsha') ?? 0) + (counts.get('eval') ?? 0);
}

describe('watchdog', () => {
  it('keeps a lock with a 1 s lease held for 3 s, and renews nothing after unlock', async () => {
    // Leases short enough to see several renewals, long enough for a loaded machine's event loop.
    const redisson = client({ lockWatchdogTimeout: 1_000 });
    const lock = redisson.getLock('long-job');
    const lost: unknown[] = [];
    redisson.on('lockLost', (event) => lost.push(event));
    const handle = await lock.acquire();
    await delay(3_000);
    expect(handle.signal.aborted).toBe(false);
    expect(await lock.isHeldByThread(handle.threadId)).toBe(true);
    const ttl = await admin().pttl('long-job');
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(1_000);
    await handle.release();

    // A hand-written hold on the same key is not kept alive by anything this client does.
    await admin().hset('long-job', `${redisson.id}:${handle.threadId}`, 1);
    await admin().pexpire('long-job', 300);
    const before = await scriptCalls();
    await delay(1_200); // more than a renewal period: a renewal would show
    expect(await scriptCalls()).toBe(before);
    expect(await admin().exists('long-job')).toBe(0);
    expect(lost).toEqual([]);
    expect(redisson.diagnostics().leases).toBe(0);
  });

  it('renews many leases in batches of lockWatchdogBatchSize', async () => {
    const redisson = client({ lockWatchdogTimeout: 900, lockWatchdogBatchSize: 4 });
    const handles = await Promise.all(
      Array.from({ length: 10 }, (_, i) => redisson.getLock(`batch-${i}`).acquire()),
    );
    const before = await commandCounts(admin());
    await delay(1_500); // about five renewal rounds, one every 300 ms
    const during = commandsBetween(before, await commandCounts(admin()));
    const calls = (during.evalsha ?? 0) + (during.eval ?? 0);
    // ceil(10 / 4) = 3 calls per round; one call per lease would be 10 per round.
    expect(calls).toBeGreaterThanOrEqual(3);
    expect(calls).toBeLessThanOrEqual(3 * 6);
    for (let i = 0; i < 10; i++) expect(await admin().exists(`batch-${i}`)).toBe(1);
    await Promise.all(handles.map((h) => h.release()));
  });

  it('keeps several renewal calls of a round in flight, never more than RENEWAL_CALLS_IN_FLIGHT, and renews every lease', async () => {
    const proxy = await ChaosProxy.start(Number(new URL(server().url).port));
    const redis = new Redis(proxy.url);
    // A round every 3 s; 1 000 locks make 10 batches of 100, more than may be in flight.
    const redisson = new RedissonClient(redis, { lockWatchdogTimeout: 9_000 });
    let letThrough = (): void => undefined;
    try {
      const lost: unknown[] = [];
      redisson.on('lockLost', (event) => lost.push(event));
      const names = Array.from({ length: 1_000 }, (_, i) => `in-flight-${i}`);
      await Promise.all(names.map((name) => redisson.getLock(name).acquire()));
      // Only renew.lua runs HEXISTS: once per lease renewed.
      const checked = async (): Promise<number> => (await commandCounts(admin())).get('hexists') ?? 0;
      // A first round loads the script; the next starts a period after it.
      await eventually(async () => (await checked()) >= 1_000, 10_000, 'a first renewal round');
      const before = await checked();
      // From now on the client's commands wait in the proxy, so no renewal call can be answered.
      let sent = '';
      proxy.set('up', {
        until: new Promise<void>((resolve) => (letThrough = resolve)),
        tap: (chunk) => (sent += chunk.toString('latin1')),
      });
      const calls = (): number => sent.match(/\$7\r\nevalsha\r\n/gi)?.length ?? 0;
      await eventually(() => calls() >= RENEWAL_CALLS_IN_FLIGHT, 10_000, 'renewal calls sent before any reply');
      await delay(200); // a further call would follow at once; none may before a reply
      expect(calls()).toBe(RENEWAL_CALLS_IN_FLIGHT);
      letThrough();
      proxy.heal();
      await eventually(async () => (await checked()) >= before + 1_000, 10_000, 'the whole second round');
      expect(lost).toEqual([]);
      expect(redisson.diagnostics().leases).toBe(1_000);
      expect(await admin().exists(...names)).toBe(1_000);
    } finally {
      letThrough();
      await redisson.shutdown();
      redis.disconnect();
      await proxy.close();
    }
  });

  it('aborts the handle signal with LockLostError when the key is deleted, and stops renewing', async () => {
    const redisson = client({ lockWatchdogTimeout: 300 });
    const lock = redisson.getLock('doomed');
    const events: RedissonEvents['lockLost'][] = [];
    redisson.on('lockLost', (event) => events.push(event));
    const handle = await lock.acquire();
    await admin().del('doomed');
    await eventually(() => handle.signal.aborted, 3_000, 'the loss to be signalled');
    expect(handle.signal.reason).toBeInstanceOf(LockLostError);
    expect(handle.signal.reason).toMatchObject({ code: 'ERR_LOCK_LOST', lockName: 'doomed' });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ name: 'doomed', owner: `${redisson.id}:${handle.threadId}` });
    expect(redisson.diagnostics().leases).toBe(0);

    const error = await handle.release().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockNotHeldError);
    expect((error as Error).cause).toBe(handle.signal.reason);
    await expect(handle.release()).resolves.toBeUndefined();

    const before = await scriptCalls();
    await delay(400);
    expect(await scriptCalls()).toBe(before);
  });

  it('makes unlock() throw LockNotHeldError once the watchdog found the lock gone', async () => {
    const redisson = client({ lockWatchdogTimeout: 300 });
    const lost = new Promise<RedissonEvents['lockLost']>((resolve) => redisson.on('lockLost', resolve));
    await redisson.getLock('gone').lock();
    await admin().del('gone');
    await lost;
    await expect(redisson.getLock('gone').unlock()).rejects.toBeInstanceOf(LockNotHeldError);
  });

  it('aborts the signal of a handle whose explicit lease ends before release', async () => {
    const redisson = client();
    const handle = await redisson.getLock('short').acquire({ leaseTime: 100 });
    await eventually(() => handle.signal.aborted, 3_000, 'the lease end to be signalled');
    expect(handle.signal.reason).toBeInstanceOf(LockLostError);
    await expect(handle.release()).rejects.toBeInstanceOf(LockNotHeldError);
  });

  it('keeps a reentrant hold renewed until its last release', async () => {
    const redisson = client({ lockWatchdogTimeout: 300 });
    const lock = redisson.getLock('nested');
    await redisson.run(async () => {
      await lock.lock();
      await lock.lock();
      await lock.unlock();
      await delay(700);
      expect(await lock.getHoldCount()).toBe(1);
      await lock.unlock();
    });
    expect(await lock.isLocked()).toBe(false);
    expect(redisson.diagnostics().leases).toBe(0);
  });
});
