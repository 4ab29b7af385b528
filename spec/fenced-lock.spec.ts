import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { RFencedLock, LockLostError, LockNotHeldError, RLock } from '../lib';
import { acquireFencedLock } from '../lib/kinds/scripts/fenced-lock';
import { delay, useRedis } from './helpers/fixture';
import { plainRunner } from './helpers/lock-scripts';
import { eventually } from './helpers/redis-server';

const { admin, client, server } = useRedis();
const WORKER = join(__dirname, 'fixtures', 'fenced-worker.mjs');

const isStrictlyIncreasing = (values: readonly number[]): boolean => values.every((value, i) => i === 0 || value > values[i - 1]!);

/**
 * A store guarded by fencing tokens: the write lands only if its token is larger than any token the
 * store has accepted before (compare-and-set in one script). Resolves whether it landed.
 */
async function guardedWrite(key: string, token: number, value: string): Promise<boolean> {
  const landed = await admin().eval(
    `local seen = tonumber(redis.call('hget', KEYS[1], 'token') or 0)
     if tonumber(ARGV[1]) <= seen then return 0 end
     redis.call('hset', KEYS[1], 'token', ARGV[1], 'value', ARGV[2])
     return 1`,
    1,
    key,
    token,
    value,
  );
  return landed === 1;
}

describe('FencedLock tokens', () => {
  it('draws a larger token for every acquisition: across holders, clients and re-entries', async () => {
    const a = client();
    const b = client();
    const tokens: number[] = [];
    expect(await a.getFencedLock('fenced:seq').getToken()).toBeNull();
    for (let round = 0; round < 3; round++) {
      for (const redisson of [a, b]) {
        const lock = redisson.getFencedLock('fenced:seq');
        await redisson.run(async () => {
          const handle = await lock.acquire();
          tokens.push(handle.fencingToken);
          tokens.push(await lock.lockAndGetToken()); // re-entry draws one too, as in Redisson
          const reentered = await lock.tryLockAndGetToken();
          tokens.push(reentered!);
          expect(await lock.getHoldCount()).toBe(3);
          expect(await lock.getToken()).toBe(reentered);
          await lock.unlock();
          await lock.unlock();
          await handle.release();
        });
        tokens.push((await lock.tryAcquire())!.fencingToken);
        await lock.unlock();
        expect(await lock.tryLock()).toBe(true); // the plain methods draw one as well
        await lock.unlock();
        tokens.push((await lock.getToken())!);
      }
    }
    expect(tokens).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(await admin().get('redisson_lock_token:{fenced:seq}')).toBe('30');
    expect(await admin().pttl('redisson_lock_token:{fenced:seq}')).toBe(-1); // never expires
  });

  it('keeps tokens strictly increasing across 3 processes taking turns, re-entries included', async () => {
    const workers = [1, 2, 3].map(() =>
      spawn(process.execPath, [WORKER, server().url, '15', 'fenced:procs', 'fenced:log'], { stdio: ['ignore', 'pipe', 'pipe'] }),
    );
    const outputs = workers.map((worker) => {
      const chunks: Buffer[] = [];
      worker.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
      return chunks;
    });
    const stderr: string[] = [];
    for (const worker of workers) worker.stderr.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
    const codes = await Promise.all(workers.map(async (worker) => (await once(worker, 'exit'))[0] as number));
    expect(stderr.join('')).toBe('');
    expect(codes).toEqual([0, 0, 0]);
    // Appended under the lock, in the order the holders held it: strictly increasing, no gaps.
    const log = (await admin().lrange('fenced:log', 0, -1)).map(Number);
    expect(log).toEqual(Array.from({ length: 90 }, (_, i) => i + 1));
    for (const chunks of outputs) {
      const own = JSON.parse(Buffer.concat(chunks).toString()) as number[];
      expect(own).toHaveLength(30);
      expect(isStrictlyIncreasing(own)).toBe(true);
    }
  });

  it('lets a guarded store refuse the write of a holder whose lease ran out meanwhile', async () => {
    const slow = client();
    const fast = client();
    // The slow holder takes the lock with a short lease, then stalls (a GC pause, a slow call...).
    const stale = await slow.getFencedLock('fenced:store-lock').acquire({ leaseTime: 300 });
    expect(await guardedWrite('fenced:store', stale.fencingToken, 'first write by the slow holder')).toBe(true);
    await delay(600);
    // Meanwhile the lease ended and another client took the lock, with a larger token.
    const fresh = await fast.getFencedLock('fenced:store-lock').acquire({ waitTime: 10_000 });
    expect(fresh.fencingToken).toBeGreaterThan(stale.fencingToken);
    expect(await guardedWrite('fenced:store', fresh.fencingToken, 'by the new holder')).toBe(true);
    // The slow holder wakes up and writes: the lock could not stop it, the token does.
    expect(await guardedWrite('fenced:store', stale.fencingToken, 'stale overwrite')).toBe(false);
    expect(await admin().hget('fenced:store', 'value')).toBe('by the new holder');
    await eventually(() => stale.signal.aborted, 5_000, 'the stale handle to learn its lease ended');
    expect(stale.signal.reason).toBeInstanceOf(LockLostError);
    await expect(stale.release()).rejects.toBeInstanceOf(LockNotHeldError);
    await fresh.release();
  });
});

describe('FencedLock operations', () => {
  it('is an RLock: same hash and channel, so an RLock of the same name excludes it', async () => {
    const redisson = client();
    const fenced = redisson.getFencedLock('fenced:rlock');
    expect(fenced).toBeInstanceOf(RLock);
    expect(fenced).toBeInstanceOf(RFencedLock);
    const token = await fenced.lockAndGetToken({ leaseTime: 10_000 });
    expect(token).toBe(1);
    const ttl = await fenced.remainTimeToLive();
    expect(ttl).toBeGreaterThan(5_000);
    expect(ttl).toBeLessThanOrEqual(10_000); // the lease is applied (Redisson's lockAndGetToken(lease) ignores it)
    expect(Object.values(await admin().hgetall('fenced:rlock'))).toEqual(['1']);
    expect(await client().getLock('fenced:rlock').tryLock()).toBe(false);
    expect(await client().getFencedLock('fenced:rlock').tryLockAndGetToken()).toBeNull();
    expect(await client().getFencedLock('fenced:rlock').tryLockAndGetToken({ waitTime: 100 })).toBeNull();
    await fenced.unlock();
    expect(await redisson.getLock('fenced:rlock').tryLock()).toBe(true); // no token drawn by an RLock
    await redisson.getLock('fenced:rlock').unlock();
    expect(await fenced.getToken()).toBe(1);
  });

  it('gives other kinds no token: their handles carry fencingToken undefined', async () => {
    const handle = await client().getLock('fenced:plain').acquire();
    expect(handle.fencingToken).toBeUndefined();
    await handle.release();
  });

  it('keeps the token counter on forceUnlock and deletes it with delete(); braces name the keys', async () => {
    const redisson = client();
    const lock = redisson.getFencedLock('{t1}:job');
    await lock.lockAndGetToken();
    await lock.unlock();
    await lock.lockAndGetToken();
    expect(await admin().get('redisson_lock_token:{t1}:job')).toBe('2');
    expect(await lock.forceUnlock()).toBe(true);
    expect(await lock.getToken()).toBe(2);
    expect(await lock.lockAndGetToken()).toBe(3); // forceUnlock must not make tokens go back
    expect(await lock.delete()).toBe(true);
    expect((await admin().keys('*')).filter((key) => !key.startsWith('redisson_unlock_latch:'))).toEqual([]);
    expect(await lock.getToken()).toBeNull();
    expect(await lock.delete()).toBe(false);
    expect(await lock.lockAndGetToken()).toBe(1); // a deleted counter starts over
    await lock.unlock();
  });
});

describe('FencedLock acquire script', () => {
  it('counts a re-sent acquisition once and draws no second token for it', async () => {
    const runner = plainRunner(admin());
    const owner = 'client-a:1';
    expect(await acquireFencedLock(runner, 'fenced:resend', owner, 10_000, 0)).toEqual({ acquired: true, token: 1 });
    // The same call again (believing no holds), as a re-send after a lost reply would land.
    expect(await acquireFencedLock(runner, 'fenced:resend', owner, 10_000, 0)).toEqual({ acquired: true, token: 1 });
    expect(await admin().hget('fenced:resend', owner)).toBe('1');
    // A real re-entry (believing its one hold) draws a new token.
    expect(await acquireFencedLock(runner, 'fenced:resend', owner, 10_000, 1)).toEqual({ acquired: true, token: 2 });
    expect(await admin().hget('fenced:resend', owner)).toBe('2');
    const busy = await acquireFencedLock(runner, 'fenced:resend', 'client-b:1', 10_000, 0);
    expect(busy.acquired).toBe(false);
    expect(busy.acquired === false && busy.ttl).toBeGreaterThan(5_000);
    expect(await admin().get('redisson_lock_token:{fenced:resend}')).toBe('2');
  });
});
