import { LockNotHeldError } from '../../lib';
import { eventually } from '../helpers/redis-server';
import { describeInterop } from './helpers/java-tools';
import { useInterop } from './helpers/use-interop';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

describeInterop('interop: owner fields and hold counts', () => {
  const { admin, client, peer, javaLock } = useInterop();

  it('Java writes <clientId>:<javaThreadId> with the hold count; Node reads it as held by someone else', async () => {
    const java = javaLock('own:java');
    const tid = await peer().threadId(java.thread);
    const redisson = client();
    const node = redisson.getLock('own:java');

    for (let i = 0; i < 3; i++) await java.lock();
    expect(peer().clientId).toMatch(new RegExp(`^${UUID}$`));
    expect(await admin().hgetall('own:java')).toEqual({ [`${peer().clientId}:${tid}`]: '3' });
    expect(await java.getHoldCount()).toBe(3);
    expect(await java.isHeldByCurrentThread()).toBe(true);
    expect(await java.isHeldByThread(tid)).toBe(true);

    expect(await node.isLocked()).toBe(true);
    expect(await node.remainTimeToLive()).toBeGreaterThan(20_000);
    // Node's owner token is <its own clientId>:<tid>, so the same thread number is not the Java holder.
    expect(await node.isHeldByThread(tid)).toBe(false);
    expect(await node.getHoldCount({ threadId: tid })).toBe(0);
    await expect(node.unlock({ threadId: tid })).rejects.toBeInstanceOf(LockNotHeldError);
    expect(await admin().hgetall('own:java')).toEqual({ [`${peer().clientId}:${tid}`]: '3' });

    await java.unlock();
    await java.unlock();
    expect(await admin().hgetall('own:java')).toEqual({ [`${peer().clientId}:${tid}`]: '1' });
    expect(await java.getHoldCount()).toBe(1);
    await java.unlock();
    expect(await admin().exists('own:java')).toBe(0);
    expect(await node.isLocked()).toBe(false);
  });

  it('who holds it: a Java holder shows as recorded: false; a Node holder that records itself changes nothing Java reads', async () => {
    const java = javaLock('who:java');
    const tid = await peer().threadId(java.thread);
    const redisson = client({ ownerInfo: { service: 'node-side' } });
    await java.lock();
    expect(await redisson.getLock('who:java').holders()).toEqual([
      { role: 'holder', owner: `${peer().clientId}:${tid}`, clientId: peer().clientId, threadId: tid, holds: 1, recorded: false },
    ]);
    await java.unlock();

    const handle = await redisson.run(() => redisson.getLock('who:node').acquire(), { label: 'node work' });
    expect(await admin().hgetall('who:node')).toEqual({ [`${redisson.id}:${handle.threadId}`]: '1' });
    const javaView = javaLock('who:node');
    expect(await javaView.isLocked()).toBe(true);
    expect(await javaView.isHeldByCurrentThread()).toBe(false);
    expect(await redisson.getLock('who:node').holders()).toMatchObject([{ recorded: true, service: 'node-side' }]);
    await handle.release();
  });

  it('Node writes <clientId>:<threadId> with the hold count; Java reads it as held by someone else', async () => {
    const redisson = client();
    const node = redisson.getLock('own:node');
    const java = javaLock('own:node');
    const tid = await peer().threadId(java.thread);

    for (let i = 0; i < 3; i++) await node.lock({ threadId: 7 });
    expect(redisson.id).toMatch(new RegExp(`^${UUID}$`));
    expect(await admin().hgetall('own:node')).toEqual({ [`${redisson.id}:7`]: '3' });
    expect(await node.getHoldCount({ threadId: 7 })).toBe(3);
    expect(await node.isHeldByThread(7)).toBe(true);

    expect(await java.isLocked()).toBe(true);
    expect(await java.remainTimeToLive()).toBeGreaterThan(20_000);
    expect(await java.getHoldCount()).toBe(0);
    expect(await java.isHeldByCurrentThread()).toBe(false);
    // Java asks for <its own clientId>:7, which is not the Node holder.
    expect(await java.isHeldByThread(7)).toBe(false);
    await expect(java.unlock()).rejects.toThrow(
      new RegExp(`IllegalMonitorStateException: attempt to unlock lock, not locked by current thread by node id: ${peer().clientId} thread-id: ${tid}`),
    );
    expect(await admin().hgetall('own:node')).toEqual({ [`${redisson.id}:7`]: '3' });

    await node.unlock({ threadId: 7 });
    await node.unlock({ threadId: 7 });
    expect(await admin().hgetall('own:node')).toEqual({ [`${redisson.id}:7`]: '1' });
    expect(await node.getHoldCount({ threadId: 7 })).toBe(1);
    await node.unlock({ threadId: 7 });
    expect(await admin().exists('own:node')).toBe(0);
    expect(await java.isLocked()).toBe(false);
  });

  it('leaves the same hash and lease after the same reentrant sequence on either side', async () => {
    const java = javaLock('seq:java');
    const tid = await peer().threadId(java.thread);
    const node = client().getLock('seq:node');
    const leaseMs = 20_000;

    // Lease given: reentry resets the TTL to it; a partial unlock sets it again.
    await java.lock(leaseMs);
    await java.lock(leaseMs);
    await java.unlock();
    await node.lock({ threadId: 5, leaseTime: leaseMs });
    await node.lock({ threadId: 5, leaseTime: leaseMs });
    await node.unlock({ threadId: 5 });

    const javaHash = await admin().hgetall('seq:java');
    const nodeHash = await admin().hgetall('seq:node');
    expect(Object.values(javaHash)).toEqual(['1']);
    expect(Object.values(nodeHash)).toEqual(['1']);
    expect(Object.keys(javaHash)).toEqual([`${peer().clientId}:${tid}`]);
    for (const key of ['seq:java', 'seq:node']) {
      expect(await admin().type(key)).toBe('hash');
      const ttl = await admin().pttl(key);
      expect(ttl).toBeGreaterThan(leaseMs - 5_000);
      expect(ttl).toBeLessThanOrEqual(leaseMs);
    }
    await java.unlock();
    await node.unlock({ threadId: 5 });
    // ioredisson deletes its unlock latches a moment after the reply (see unlock-latch.spec.ts).
    await eventually(async () => (await admin().keys('*')).length === 0, 5_000, 'no keys left');
  });
});
