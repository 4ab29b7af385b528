import { lockChannel, ownerToken, prefixName, unlockLatchKey } from '../../lib/keys';

describe('key and channel names (Redisson derivation)', () => {
  it.each([
    ['order:42', 'redisson_lock__channel:{order:42}', 'redisson_unlock_latch:{order:42}:abc'],
    ['{t1}:job', 'redisson_lock__channel:{t1}:job', 'redisson_unlock_latch:{t1}:job:abc'],
    ['a{b', 'redisson_lock__channel:a{b', 'redisson_unlock_latch:a{b:abc'],
  ])('%s', (name, channel, latch) => {
    expect(lockChannel(name)).toBe(channel);
    expect(unlockLatchKey(name, 'abc')).toBe(latch);
  });

  it('builds prefixed names and owner tokens', () => {
    expect(prefixName('redisson_lock_queue', 'x')).toBe('redisson_lock_queue:{x}');
    expect(ownerToken('8fe4a548-fa9f-42a3-8482-1d24d038f24f', 57)).toBe('8fe4a548-fa9f-42a3-8482-1d24d038f24f:57');
  });
});
