import { LockLostError } from '../../lib';
import { delay, useRedis } from '../helpers/fixture';
import { Child } from './fixtures/child';

const { admin, client, server } = useRedis();
const children: Child[] = [];
afterEach(async () => {
  await Promise.all(children.splice(0).map((child) => child.stop()));
});

function holder(name: string, watchdogMs: number): Child {
  const child = new Child('holder.mjs', [server().url, name, String(watchdogMs)]);
  children.push(child);
  return child;
}

describe('holder process faults', () => {
  it('SIGSTOP past the lease: another process takes over; the paused one learns it lost the lock on resume', async () => {
    const paused = holder('stopped', 500);
    const { owner } = await paused.next('acquired');
    paused.signal('SIGSTOP');

    const redisson = client();
    const start = Date.now();
    const taken = await redisson.getLock('stopped').acquire({ waitTime: 10_000 });
    const takeover = Date.now() - start;
    const newOwner = `${redisson.id}:${taken.threadId}`;
    expect(await admin().hgetall('stopped')).toEqual({ [newOwner]: '1' });

    const resumedAt = Date.now();
    paused.signal('SIGCONT');
    const lost = await paused.next('lost');
    expect(lost.code).toBe('ERR_LOCK_LOST');
    expect(lost.at - resumedAt).toBeLessThan(2_000); // as soon as it runs again
    paused.send('unlock');
    expect((await paused.next('unlock-failed')).code).toBe('ERR_LOCK_NOT_HELD');
    expect(await admin().hgetall('stopped')).toEqual({ [newOwner]: '1' }); // the new holder's lock is untouched
    expect(owner).not.toBe(newOwner);
    expect(takeover).toBeLessThan(10_000);
    await taken.release();
  });

  it('SIGKILL of the holder: a waiter gets the lock within the lease plus a margin', async () => {
    const victim = holder('killed', 1_000);
    await victim.next('acquired');
    const redisson = client();
    const waiting = redisson.getLock('killed').acquire({ waitTime: 20_000 });
    await delay(100);
    const killedAt = Date.now();
    victim.signal('SIGKILL');
    const handle = await waiting;
    const waited = Date.now() - killedAt;
    expect(waited).toBeLessThan(1_000 + 3_000);
    expect(handle.signal.aborted).toBe(false);
    await handle.release();
  });
});

describe('in-process stalls', () => {
  it('detects and signals a loss when the event loop was blocked longer than the lease', async () => {
    const redisson = client({ lockWatchdogTimeout: 300 });
    const handle = await redisson.getLock('blocked').acquire();
    const until = Date.now() + 1_200;
    while (Date.now() < until) {
      // Block the event loop: no timer, no renewal can run.
    }
    const resumed = Date.now();
    await new Promise<void>((resolve) => handle.signal.addEventListener('abort', () => resolve(), { once: true }));
    expect(Date.now() - resumed).toBeLessThan(1_000);
    expect(handle.signal.reason).toBeInstanceOf(LockLostError);
    await expect(handle.release()).rejects.toMatchObject({ code: 'ERR_LOCK_NOT_HELD' });
  });
});
