import { useRedis } from './helpers/fixture';

const { admin, client } = useRedis();

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
