import Redis from 'ioredis';
import { RedissonClient } from '../lib';
import { useRedis } from './helpers/fixture';
import { ChaosProxy } from './helpers/proxy';
import { commandCounts, eventually } from './helpers/redis-server';

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
  it.each(['getSemaphore', 'getPermitExpirableSemaphore'] as const)(
    "%s: the parked waiter's attempt goes right behind the release: it holds the permit before the release's reply is back",
    async (factory) => {
      const proxy = await ChaosProxy.start(Number(new URL(server().url).port));
      const redis = new Redis(proxy.url, { maxRetriesPerRequest: null });
      const redisson = new RedissonClient(redis);
      const name = `s:hand-off:${factory}`;
      try {
        const semaphore = () => redisson[factory](name);
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
    },
  );

  it("a release of 3 permits handed to one waiter still wakes the others with the rest of its message", async () => {
    const redisson = client();
    const name = 's:hand-off:rest';
    await redisson.getSemaphore(name).trySetPermits(3);
    // Scripts loaded first: a NOSCRIPT reply would send the release again, behind the handed-on attempt.
    await (await redisson.getSemaphore(name).acquire()).release();
    const held = await redisson.getSemaphore(name).acquire(3);
    const waiting = [1, 2, 3].map(() => redisson.getSemaphore(name).acquire());
    await eventually(() => redisson.diagnostics().waiters === 3, 5_000, 'three parked waiters');
    await held.release();
    // The oldest got its permit by the hand-off; what is left of the message `3` wakes the other two
    // (they would re-check by themselves only after 5 s).
    await eventually(() => redisson.diagnostics().waiters === 0, 2_500, 'every waiter served');
    const handles = await Promise.all(waiting);
    await Promise.all(handles.map((handle) => handle.release()));
    expect(await redisson.getSemaphore(name).availablePermits()).toBe(3);
  });
});
