import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import type Redis from 'ioredis';
import { InvalidArgumentError, LockLostError, LockNotHeldError, type RedissonEvents } from '../lib';
import { PERMIT_NO_EXPIRY, permitTimeoutKey, semaphoreChannel } from '../lib/keys';
import { delay, useRedis } from './helpers/fixture';
import { commandCounts, eventually } from './helpers/redis-server';

const { admin, client, server } = useRedis();
const HOLDER = join(__dirname, 'contract', 'fixtures', 'permit-holder.mjs');

/** Starts a process holding permits; resolves it with its permit ids once they are held. */
async function holder(args: string[]): Promise<{ child: ChildProcess; ids: string[] }> {
  const child = spawn(process.execPath, [HOLDER, server().url, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  await eventually(() => out.includes('\n') || child.exitCode !== null, 20_000, 'the holder to hold its permits');
  expect(child.exitCode).toBeNull();
  return { child, ids: out.trim().split(',') };
}

async function kill(child: ChildProcess): Promise<void> {
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

/** Messages published on `channel` while `run` runs (and a moment after). */
async function messagesDuring(redis: Redis, channel: string, run: () => Promise<unknown>): Promise<string[]> {
  const subscriber = redis.duplicate();
  const messages: string[] = [];
  subscriber.on('message', (_channel: string, message: string) => messages.push(message));
  await subscriber.subscribe(channel);
  try {
    await run();
    await delay(100);
  } finally {
    subscriber.disconnect();
  }
  return messages;
}

describe('RPermitExpirableSemaphore', () => {
  it('stores permit ids as 16 raw bytes, scored by expiry or 922337203685477, and reports them as 32 hex', async () => {
    const semaphore = client().getPermitExpirableSemaphore('pes:bytes');
    await semaphore.trySetPermits(2);
    const forever = await semaphore.acquire();
    const before = Date.now();
    const leased = await semaphore.acquire({ leaseTime: 60_000 });
    expect(forever.permitId).toMatch(/^[0-9a-f]{32}$/);
    const members = await admin().zrangeBuffer(permitTimeoutKey('pes:bytes'), 0, -1, 'WITHSCORES');
    const scores = new Map<string, number>();
    for (let i = 0; i < members.length; i += 2) {
      expect(members[i]!.length).toBe(16);
      scores.set(members[i]!.toString('hex'), Number(members[i + 1]!.toString()));
    }
    expect(scores.get(forever.permitId!)).toBe(PERMIT_NO_EXPIRY);
    const expiry = scores.get(leased.permitId!)!;
    expect(expiry).toBeGreaterThanOrEqual(before + 60_000);
    expect(expiry).toBeLessThanOrEqual(Date.now() + 60_000);
    expect(await admin().get('pes:bytes')).toBe('0');
    expect(await semaphore.getLeaseTime(forever.permitId!)).toBe(-1);
    expect(await semaphore.getLeaseTime(leased.permitId!)).toBeGreaterThan(50_000);
    // The id round-trips: release by its hex form removes exactly that member.
    await semaphore.release(forever.permitId!);
    expect(await admin().zcard(permitTimeoutKey('pes:bytes'))).toBe(1);
    await leased.release();
    expect(await admin().zcard(permitTimeoutKey('pes:bytes'))).toBe(0);
    expect(await semaphore.availablePermits()).toBe(2);
  });

  it('a permit released twice fails clearly, by id and by handle', async () => {
    const semaphore = client().getPermitExpirableSemaphore('pes:twice');
    await semaphore.trySetPermits(1);
    const handle = await semaphore.acquire();
    await semaphore.release(handle.permitId!);
    await expect(semaphore.release(handle.permitId!)).rejects.toThrow(/not held: already released/);
    await expect(semaphore.release(handle.permitId!)).rejects.toBeInstanceOf(LockNotHeldError);
    expect(await semaphore.tryRelease(handle.permitId!)).toBe(false);
    await expect(handle.release()).rejects.toBeInstanceOf(LockNotHeldError);
    expect(await semaphore.availablePermits()).toBe(1);
    const again = await semaphore.acquire();
    await again.release();
    await again.release(); // a handle's later calls do nothing
    expect(await semaphore.availablePermits()).toBe(1);
  });

  it("a killed process's leased permits come back after their lease, not before", async () => {
    const semaphore = client().getPermitExpirableSemaphore('pes:killed');
    await semaphore.trySetPermits(2);
    const { child } = await holder(['pes:killed', '2', '3000']);
    await kill(child);
    const killedAt = performance.now();
    expect(await semaphore.tryAcquire()).toBeNull();
    // A waiter is bounded by the earliest expiry: no message announces it.
    const handle = await semaphore.acquire(2, { waitTime: 20_000 });
    const waited = performance.now() - killedAt;
    expect(waited).toBeLessThan(3_000 + 2_500);
    expect(waited).toBeGreaterThan(1_000);
    await handle.release();
    expect(await semaphore.availablePermits()).toBe(2);
  });

  it('a watchdog permit outlives many leases while its process lives, and comes back within one lease after SIGKILL', async () => {
    const lease = 1_500;
    const semaphore = client().getPermitExpirableSemaphore('pes:watchdog');
    await semaphore.trySetPermits(1);
    const { child, ids } = await holder(['pes:watchdog', '1', 'watchdog', String(lease)]);
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await delay(4 * lease);
    expect(await semaphore.acquiredPermits()).toBe(1);
    expect(await semaphore.tryAcquire()).toBeNull();
    const left = await semaphore.getLeaseTime(ids[0]!);
    expect(left).toBeGreaterThan(0);
    // The read's clock is the parent's at the call (as Redisson's, the client's time goes with the
    // script): a renewal landing between that moment and the script's run may show a few ms more.
    expect(left).toBeLessThanOrEqual(lease + 100);
    expect(stderr).toBe('');
    await kill(child);
    const killedAt = performance.now();
    const handle = await semaphore.acquire({ waitTime: 20_000 });
    // Its last renewal set at most one lease from the moment it ran; generous slack for the load.
    expect(performance.now() - killedAt).toBeLessThan(lease + 1_500);
    await handle.release();
  });

  it('signals a watchdog permit lost when it is removed behind its holder\'s back', async () => {
    const redisson = client({ lockWatchdogTimeout: 600 });
    const lost: RedissonEvents['lockLost'][] = [];
    redisson.on('lockLost', (event) => lost.push(event));
    const semaphore = redisson.getPermitExpirableSemaphore('pes:removed');
    await semaphore.trySetPermits(1);
    const handle = await semaphore.acquire({ watchdog: true });
    await delay(1_500);
    expect(handle.signal.aborted).toBe(false);
    await admin().zrem(permitTimeoutKey('pes:removed'), Buffer.from(handle.permitId!, 'hex'));
    await eventually(() => handle.signal.aborted, 5_000, 'the renewal round to find it gone');
    expect(handle.signal.reason).toBeInstanceOf(LockLostError);
    expect(lost.map((event) => event.name)).toEqual(['pes:removed']);
    await expect(handle.release()).rejects.toBeInstanceOf(LockNotHeldError);
    expect(redisson.diagnostics().leases).toBe(0);
  });

  it('signals an explicit lease lost when it ends before release, and shutdown reports leased permits lost', async () => {
    const redisson = client();
    const semaphore = redisson.getPermitExpirableSemaphore('pes:ends');
    await semaphore.trySetPermits(2);
    const short = await semaphore.acquire({ leaseTime: 300 });
    await eventually(() => short.signal.aborted, 5_000, 'the lease end');
    expect(short.signal.reason).toBeInstanceOf(LockLostError);
    const kept = await semaphore.acquire({ watchdog: true });
    await redisson.shutdown();
    expect(kept.signal.reason).toBeInstanceOf(LockLostError);
    expect(redisson.diagnostics().leases).toBe(0);
  });

  it('updateLeaseTime, getLeaseTime, tryRelease of several ids, getPermits, setPermits', async () => {
    const semaphore = client().getPermitExpirableSemaphore('pes:ops');
    await semaphore.setPermits(5);
    const handle = await semaphore.acquire(3);
    expect(handle.permitIds).toHaveLength(3);
    expect(await semaphore.acquiredPermits()).toBe(3);
    expect(await semaphore.availablePermits()).toBe(2);
    expect(await semaphore.getPermits()).toBe(5);
    expect(await semaphore.updateLeaseTime(handle.permitIds[0]!, 10_000)).toBe(true);
    expect(await semaphore.getLeaseTime(handle.permitIds[0]!)).toBeGreaterThan(8_000);
    await semaphore.setPermits(4); // one fewer in total: available drops to 1
    expect(await semaphore.availablePermits()).toBe(1);
    expect(await semaphore.tryRelease([handle.permitIds[1]!, 'f'.repeat(32)])).toBe(false); // all or none
    expect(await semaphore.acquiredPermits()).toBe(3);
    expect(await semaphore.tryRelease(handle.permitIds.slice(1))).toBe(true);
    await expect(semaphore.getLeaseTime(handle.permitIds[1]!)).rejects.toBeInstanceOf(LockNotHeldError);
    expect(await semaphore.updateLeaseTime(handle.permitIds[1]!, 1_000)).toBe(false);
    await expect(handle.release()).rejects.toBeInstanceOf(LockNotHeldError); // two of three were released by id
    expect(await semaphore.getPermits()).toBe(4);
    await semaphore.addPermits(-4);
    expect(await semaphore.availablePermits()).toBe(0);
  });

  it('publishes exactly what Redisson publishes', async () => {
    const semaphore = client().getPermitExpirableSemaphore('pes:wire');
    const messages = await messagesDuring(admin(), semaphoreChannel('pes:wire'), async () => {
      await semaphore.trySetPermits(4); // 4
      const one = await semaphore.acquire();
      const two = await semaphore.acquire(2);
      await one.release(); // new count: 2
      await two.release(); // several ids: the number released, 2
      await semaphore.addPermits(3); // the delta, 3
      await semaphore.addPermits(-1); // nothing
      await semaphore.setPermits(10); // 10
    });
    expect(messages).toEqual(['4', '2', '2', '3', '10']);
  });

  it('rejects malformed permit ids and bad leases before sending anything', async () => {
    const semaphore = client().getPermitExpirableSemaphore('pes:input');
    const before = await commandCounts(admin());
    for (const id of ['1234', 'g'.repeat(32), 'a'.repeat(33), '', 42, null, []]) {
      await expect(semaphore.release(id as never)).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(semaphore.tryRelease(id as never)).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(semaphore.getLeaseTime(id as never)).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(semaphore.updateLeaseTime(id as never, 1_000)).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    await expect(semaphore.tryRelease(['a'.repeat(32), 'A'.repeat(32)])).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(semaphore.updateLeaseTime('a'.repeat(32), 0)).rejects.toBeInstanceOf(InvalidArgumentError);
    for (const options of [{ leaseTime: 0 }, { leaseTime: 2 ** 31 }, { watchdog: 'yes' }, { watchdog: true, leaseTime: 1_000 }]) {
      await expect(semaphore.acquire(options as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    await expect(semaphore.acquire(0)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(semaphore.setPermits(-1)).rejects.toBeInstanceOf(InvalidArgumentError);
    const after = await commandCounts(admin());
    for (const command of ['evalsha', 'eval']) expect(after.get(command) ?? 0).toBe(before.get(command) ?? 0);
  });
});
