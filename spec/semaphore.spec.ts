import Redis from 'ioredis';
import { RedissonClient } from '../lib';
import { PASS_STREAK } from '../lib/kernel/hand-off';
import { useRedis } from './helpers/fixture';
import { ChaosProxy } from './helpers/proxy';
import { commandCounts, commandsBetween, eventually } from './helpers/redis-server';

const { admin, client, server } = useRedis();

describe('semaphores: delete (Redisson’s RObject.delete)', () => {
  it('a semaphore: removes its count; resolves whether it existed', async () => {
    const semaphore = client().getSemaphore('s:del');
    await semaphore.trySetPermits(3);
    expect(await admin().get('s:del')).toBe('3');
    expect(await semaphore.delete()).toBe(true);
    expect(await admin().exists('s:del')).toBe(0);
    expect(await semaphore.delete()).toBe(false);
    expect(await semaphore.availablePermits()).toBe(0);
  });

  it('an expirable semaphore: removes its count and its acquired permits', async () => {
    const semaphore = client().getPermitExpirableSemaphore('e:del');
    await semaphore.trySetPermits(2);
    const permit = await semaphore.acquire({ leaseTime: 30_000 });
    expect(await admin().zcard('{e:del}:timeout')).toBe(1);
    expect(await semaphore.delete()).toBe(true);
    expect(await admin().exists('e:del', '{e:del}:timeout')).toBe(0);
    await expect(permit.release()).rejects.toThrow();
    expect(await semaphore.delete()).toBe(false);
  });
});

describe('semaphores: local hand-off of released permits', () => {
  it("an expirable semaphore: the parked waiter's attempt goes right behind the release: it holds the permit before the release's reply is back", async () => {
    const proxy = await ChaosProxy.start(Number(new URL(server().url).port));
    const redis = new Redis(proxy.url, { maxRetriesPerRequest: null });
    const redisson = new RedissonClient(redis);
    const name = 's:hand-off:expirable';
    try {
      const semaphore = () => redisson.getPermitExpirableSemaphore(name);
      await semaphore().trySetPermits(1);
      // One cycle first loads the scripts (a NOSCRIPT reply would send the release again, behind the attempt).
      await (await semaphore().acquire()).release();
      const held = await semaphore().acquire();
      const next = semaphore().acquire();
      next.catch(() => undefined);
      await eventually(() => redisson.diagnostics().waiters === 1, 5_000, 'a parked waiter');
      const acquisitions = async () => (await commandCounts(admin())).get('decrby') ?? 0;
      const before = await acquisitions();
      // Every reply and message now takes two seconds to come back; commands reach Redis at once.
      proxy.set('down', { latencyMs: 2_000 });
      let releaseSettled = false;
      const release = held.release().finally(() => (releaseSettled = true));
      // Only a successful acquire script runs DECRBY.
      await eventually(async () => (await acquisitions()) === before + 1, 1_800, "the waiter's permit in Redis");
      expect(releaseSettled).toBe(false);
      await release;
      proxy.heal();
      await (await next).release();
      expect(await semaphore().availablePermits()).toBe(1);
    } finally {
      await redisson.shutdown();
      redis.disconnect();
      await proxy.close();
    }
  });
});

describe('semaphores: a release passed on to waiters parked in the same client', () => {
  /** Commands Redis ran between two snapshots, scripts' own included. */
  const ranSince = async (before: Map<string, number>) => commandsBetween(before, await commandCounts(admin()));

  /** Loads the release-and-acquire script on the server, so that counts below include no NOSCRIPT fallback. */
  const warmUp = async (redisson: RedissonClient, name: string) => {
    const semaphore = redisson.getSemaphore(name);
    await semaphore.trySetPermits(1);
    const held = await semaphore.acquire();
    const next = semaphore.acquire();
    await eventually(() => redisson.diagnostics().waiters === 1, 5_000, 'a parked waiter');
    await held.release();
    await (await next).release();
  };

  it('goes out in one script with the waiter’s attempt, which publishes nothing when the waiter took all', async () => {
    const redisson = client();
    const name = 's:pass:one';
    await warmUp(redisson, 's:pass:warm-up');
    await redisson.getSemaphore(name).trySetPermits(1);
    const held = await redisson.getSemaphore(name).acquire();
    const next = redisson.getSemaphore(name).acquire();
    await eventually(() => redisson.diagnostics().waiters === 1, 5_000, 'a parked waiter');
    const before = await commandCounts(admin());
    await held.release();
    const handle = await next;
    // One script: the release's INCRBY of what is left after the waiter's permit (0), no PUBLISH.
    expect(await ranSince(before)).toEqual({ evalsha: 1, get: 1, incrby: 1 });
    expect(await admin().get(name)).toBe('0');
    // With nobody parked, the release is Redisson's own: it adds the permit and publishes the count.
    const alone = await commandCounts(admin());
    await handle.release();
    expect(await ranSince(alone)).toEqual({ evalsha: 1, incrby: 1, publish: 1 });
    expect(await admin().get(name)).toBe('1');
  });

  it('a release of 3 wakes the oldest waiters while each wants no more than is left, and passes nobody over', async () => {
    const redisson = client();
    const semaphore = () => redisson.getSemaphore('s:pass:three');
    await warmUp(redisson, 's:pass:warm-up');
    await semaphore().trySetPermits(0);
    const served = [1, 2].map((permits) => semaphore().acquire(permits));
    await eventually(() => redisson.diagnostics().waiters === 2, 5_000, 'two parked waiters');
    const controller = new AbortController();
    const unserved = [2, 1].map((permits) => semaphore().acquire(permits, { signal: controller.signal }));
    await eventually(() => redisson.diagnostics().waiters === 4, 5_000, 'four parked waiters');
    const before = await commandCounts(admin());
    // 1 and 2 go to the two oldest; the one wanting 2 finds none left, and the one wanting 1 behind
    // it is not served past it.
    await semaphore().release(3);
    const handles = await Promise.all(served);
    expect(handles.map((handle) => handle.permits)).toEqual([1, 2]);
    expect(await ranSince(before)).toEqual({ evalsha: 1, get: 1, incrby: 1 });
    expect(redisson.diagnostics().waiters).toBe(2);
    controller.abort(new Error('test over'));
    for (const waiting of unserved) await expect(waiting).rejects.toThrow('test over');
    await Promise.all(handles.map((handle) => handle.release()));
    expect(await semaphore().availablePermits()).toBe(3);
  });

  it('publishes what the woken waiters leave, which wakes another client’s waiter', async () => {
    const local = client();
    const other = client();
    const name = 's:pass:rest';
    await local.getSemaphore(name).trySetPermits(0);
    const mine = local.getSemaphore(name).acquire();
    await eventually(() => local.diagnostics().waiters === 1, 5_000, 'the local waiter parked');
    const theirs = other.getSemaphore(name).acquire({ waitTime: 25_000 });
    await eventually(() => other.diagnostics().waiters === 1, 5_000, "the other client's waiter parked");
    // Two permits: one for the local waiter, in the release's script; the message `1` wakes the other.
    await local.getSemaphore(name).release(2);
    const handles = await Promise.all([mine, theirs]);
    expect(await admin().get(name)).toBe('0');
    await Promise.all(handles.map((handle) => handle.release()));
    expect(await admin().get(name)).toBe('2');
  });

  it(`after ${PASS_STREAK} releases in a row passed on, the next is left to its message, which wakes other clients' waiters too`, async () => {
    const local = client();
    const other = client();
    const name = 's:pass:streak';
    await local.getSemaphore(name).trySetPermits(1);
    let handle = await local.getSemaphore(name).acquire();
    const waiting = Array.from({ length: PASS_STREAK + 1 }, () => local.getSemaphore(name).acquire());
    await eventually(() => local.diagnostics().waiters === PASS_STREAK + 1, 5_000, 'the local waiters parked');
    const remote = other.getSemaphore(name).acquire({ waitTime: 25_000 });
    await eventually(() => other.diagnostics().waiters === 1, 5_000, "the other client's waiter parked");
    const before = await commandCounts(admin());
    for (let i = 0; i < PASS_STREAK; i++) {
      await handle.release();
      handle = await waiting[i]!;
    }
    expect((await ranSince(before)).publish).toBeUndefined();
    // The streak is used up: this release publishes, and its message wakes one waiter in each
    // client (the last local one and the other client's): whichever gets there first holds it.
    const releasedAt = performance.now();
    await handle.release();
    expect((await ranSince(before)).publish).toBe(1);
    const first = await Promise.race([waiting[PASS_STREAK]!, remote]);
    expect(performance.now() - releasedAt).toBeLessThan(2_500);
    await first.release();
    await Promise.all([waiting[PASS_STREAK]!, remote].map(async (pending) => (await pending).release()));
    expect(await admin().get(name)).toBe('1');
  });
});

describe('semaphores: the attempts of waiters woken together go out in one script', () => {
  it('a release of 5 wakes 5 waiters of another client, which try with one script between them', async () => {
    const holder = client();
    const waiter = client();
    const semaphore = (redisson: RedissonClient) => redisson.getSemaphore('s:batch:five');
    await semaphore(holder).trySetPermits(5);
    const held = await semaphore(holder).acquire(5);
    const waiting = Array.from({ length: 5 }, () => semaphore(waiter).acquire({ waitTime: 25_000 }));
    await eventually(() => waiter.diagnostics().waiters === 5, 5_000, 'five parked waiters');
    const before = await commandCounts(admin());
    await held.release();
    const handles = await Promise.all(waiting);
    const after = await commandCounts(admin());
    const ran = (command: string) => (after.get(command) ?? 0) - (before.get(command) ?? 0);
    // The holder's release, then the woken waiters' one attempt, which took 5 permits at once.
    expect(ran('evalsha')).toBe(2);
    expect(ran('decrby')).toBe(1);
    expect(await admin().get('s:batch:five')).toBe('0');
    await Promise.all(handles.map((handle) => handle.release()));
    expect(await admin().get('s:batch:five')).toBe('5');
  });

  it('serves the attempts in order, each as it would be alone: one wanting fewer gets them past one wanting more', async () => {
    const holder = client();
    const waiter = client();
    const semaphore = (redisson: RedissonClient) => redisson.getSemaphore('s:batch:order');
    await semaphore(holder).trySetPermits(0);
    const controller = new AbortController();
    const wantsThree = semaphore(waiter).acquire(3, { signal: controller.signal });
    await eventually(() => waiter.diagnostics().waiters === 1, 5_000, 'the first waiter parked');
    // It wants less: it tries at once, fails, and parks behind.
    const wantsOne = semaphore(waiter).acquire(1, { waitTime: 25_000 });
    await eventually(() => waiter.diagnostics().waiters === 2, 5_000, 'both waiters parked');
    // The message `2` wakes both: one script tries 3, which fails, then 1, which succeeds.
    await semaphore(holder).release(2);
    const handle = await wantsOne;
    expect(await admin().get('s:batch:order')).toBe('1');
    controller.abort(new Error('test over'));
    await expect(wantsThree).rejects.toThrow('test over');
    await handle.release();
    expect(await admin().get('s:batch:order')).toBe('2');
  });
});

describe('semaphores: a capacity cut by another client holds against this client’s own releases', () => {
  it("a release passed toward a parked waiter of the same client admits it only if Redis's count allows", async () => {
    const redisson = client();
    const other = client();
    const name = 's:cut:pass';
    const semaphore = () => redisson.getSemaphore(name);
    await other.getSemaphore(name).trySetPermits(2);
    const first = await semaphore().acquire();
    const second = await semaphore().acquire();
    const third = semaphore().acquire({ waitTime: 25_000 });
    await eventually(() => redisson.diagnostics().waiters === 1, 5_000, 'the third owner parked');
    // Another client cuts the capacity to 1: the count is now -1, two permits held.
    await other.getSemaphore(name).addPermits(-1);
    await first.release();
    // Redis's count is 0 after the release: the parked owner must not hold a permit.
    expect(await admin().get(name)).toBe('0');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(redisson.diagnostics().waiters).toBe(1);
    // The next release makes the count 1: now the parked owner may take it, and does.
    await second.release();
    const handle = await third;
    expect(await admin().get(name)).toBe('0');
    await handle.release();
    expect(await admin().get(name)).toBe('1');
  });
});
