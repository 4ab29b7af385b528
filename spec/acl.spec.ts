import { LOCK_USER, LOCK_USER_RULES, lockContractAsUser } from './helpers/acl';
import { useRedis } from './helpers/fixture';

lockContractAsUser('RLock as a Redis user with only the rules docs/security.md lists', (admin) =>
  admin.call('ACL', 'SETUSER', LOCK_USER.username, 'reset', ...LOCK_USER_RULES),
);

describe('a missing permission is reported, never hidden behind a fallback', () => {
  const { admin, client } = useRedis();
  const as = (username: string, rules: string[]) => {
    beforeAll(() => admin().call('ACL', 'SETUSER', username, 'reset', ...rules));
    return () => client({}, { username, password: 'locker-secret' });
  };
  const withoutSubscribe = as('no-subscribe', LOCK_USER_RULES.filter((rule) => rule !== '+subscribe'));
  const withoutChannels = as('no-channels', LOCK_USER_RULES.filter((rule) => !rule.startsWith('&')));

  it('a wait that cannot subscribe rejects with the NOPERM error instead of polling', async () => {
    const holder = client();
    await holder.getLock('contract:nosub').lock({ leaseTime: 30_000 });
    const waiter = withoutSubscribe();
    await expect(waiter.getLock('contract:nosub').tryLock({ waitTime: 20_000 })).rejects.toThrow(/NOPERM/);
    expect(waiter.diagnostics()).toEqual({ channels: 0, waiters: 0, leases: 0 });
    // A free lock needs no subscription: acquiring it still works.
    expect(await waiter.getLock('contract:free').tryLock()).toBe(true);
    await waiter.getLock('contract:free').unlock();
  });

  it('an unlock that may not publish fails and changes nothing: the lock stays held', async () => {
    const redisson = withoutChannels();
    const lock = redisson.getLock('contract:nochannel');
    const handle = await lock.acquire({ leaseTime: 30_000 });
    await expect(handle.release()).rejects.toThrow(/can't publish|permissions to access a channel/); // Redis's words, Valkey's
    expect(await admin().hget('contract:nochannel', `${redisson.id}:${handle.threadId}`)).toBe('1');
    expect(await admin().keys('redisson_unlock_latch:*')).toEqual([]);
  });
});
