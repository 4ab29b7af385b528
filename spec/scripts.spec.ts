import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { join } from 'node:path';
import { RedissonClient } from '../lib';
import { UnlockLatches } from '../lib/kernel/scripts/unlock-latches';
import { newRequestId } from '../lib/kinds/scripts/lock';
import { lockScripts, lostReplyRunner, plainRunner, type LockScriptsUnderTest } from './helpers/lock-scripts';
import { useRedis } from './helpers/fixture';
import { commandCounts } from './helpers/redis-server';

const { admin, server } = useRedis();

describe('lock scripts (reply and Redis state)', () => {
  let scripts: LockScriptsUnderTest;
  const owner = `${randomUUID()}:1`;
  const other = `${randomUUID()}:2`;

  beforeEach(() => {
    const redis = server().connect();
    scripts = lockScripts(plainRunner(redis));
  });

  it('acquire: nil and a hash field with count and lease; reentry increments; others get the PTTL', async () => {
    expect(await scripts.acquire('s', owner, 10_000, 0)).toBeNull();
    expect(await admin().hgetall('s')).toEqual({ [owner]: '1' });
    expect(await scripts.acquire('s', owner, 20_000, 1)).toBeNull();
    expect(await admin().hgetall('s')).toEqual({ [owner]: '2' });
    expect(await admin().pttl('s')).toBeGreaterThan(10_000);
    const ttl = await scripts.acquire('s', other, 10_000, 0);
    expect(ttl).toBeGreaterThan(10_000);
    expect(ttl).toBeLessThanOrEqual(20_000);
    await admin().persist('s');
    expect(await scripts.acquire('s', other, 10_000, 0)).toBe(-1);
  });

  it('unlock: decrement with lease, full release with message, nil for a non-owner', async () => {
    await scripts.acquire('u', owner, 10_000, 0);
    await scripts.acquire('u', owner, 10_000, 1);
    expect(await scripts.unlock({ name: 'u', owner: other, leaseTime: 5_000, requestId: newRequestId() })).toBe('not-held');
    expect(await scripts.unlock({ name: 'u', owner, leaseTime: 5_000, requestId: newRequestId() })).toBe('decremented');
    expect(await admin().hgetall('u')).toEqual({ [owner]: '1' });
    expect(await admin().pttl('u')).toBeLessThanOrEqual(5_000);
    expect(await scripts.unlock({ name: 'u', owner, leaseTime: 5_000, requestId: newRequestId() })).toBe('released');
    expect(await admin().exists('u')).toBe(0);
  });

  it('replays the outcome of a re-sent unlock with the same request id', async () => {
    await scripts.acquire('r', owner, 10_000, 0);
    const requestId = newRequestId();
    const latch = `redisson_unlock_latch:{r}:${requestId}`;
    // A lost reply: the script ran, but the caller never learned it (so the latch was not deleted).
    const silent = lockScripts(lostReplyRunner(server().connect()));
    expect(await silent.unlock({ name: 'r', owner, leaseTime: 30_000, requestId })).toBe('released');
    expect(await admin().get(latch)).toBe('1');
    const latchTtl = await admin().pttl(latch);
    expect(latchTtl).toBeGreaterThan(15_000);
    expect(latchTtl).toBeLessThanOrEqual(20_000);
    expect(await scripts.unlock({ name: 'r', owner, leaseTime: 30_000, requestId })).toBe('released');
    expect(await scripts.unlock({ name: 'r', owner, leaseTime: 30_000, requestId: newRequestId() })).toBe('not-held');
  });

  it('acquire: a re-sent call (holds above what the caller believes) resets the lease but counts once', async () => {
    expect(await scripts.acquire('d', owner, 5_000, 0)).toBeNull();
    expect(await scripts.acquire('d', owner, 20_000, 0)).toBeNull(); // the same call, delivered twice
    expect(await admin().hgetall('d')).toEqual({ [owner]: '1' });
    expect(await admin().pttl('d')).toBeGreaterThan(10_000);
  });

  it('trim: removes holds above the count before uncertain acquisitions, publishing when it frees the lock', async () => {
    const listener = server().connect();
    const messages: string[] = [];
    listener.on('message', (_channel: string, message: string) => messages.push(message));
    await listener.subscribe('redisson_lock__channel:{t}');
    await scripts.acquire('t', owner, 10_000, 0);
    await scripts.acquire('t', owner, 10_000, 1);
    expect(await scripts.trim('t', owner, 2)).toBe(0);
    expect(await scripts.trim('t', owner, 1)).toBe(1);
    expect(await admin().hgetall('t')).toEqual({ [owner]: '1' });
    expect(await scripts.trim('t', owner, 0)).toBe(1);
    expect(await admin().exists('t')).toBe(0);
    expect(await scripts.trim('t', other, 0)).toBe(0);
    await admin().ping();
    expect(messages).toEqual(['0']);
  });

  it('renew: extends only the leases whose owner still holds them', async () => {
    await scripts.acquire('a', owner, 1_000, 0);
    await scripts.acquire('b', other, 1_000, 0);
    expect(await scripts.renew(['a', 'b', 'c'], [owner, owner, owner], 50_000)).toEqual([true, false, false]);
    expect(await admin().pttl('a')).toBeGreaterThan(40_000);
    expect(await admin().pttl('b')).toBeLessThanOrEqual(1_000);
  });

  it('force-unlock: deletes whoever holds it and publishes 0, reports whether it existed', async () => {
    await scripts.acquire('f', other, 10_000, 0);
    const listener = server().connect();
    const messages: string[] = [];
    listener.on('message', (_channel: string, message: string) => messages.push(message));
    await listener.subscribe('redisson_lock__channel:{f}');
    expect(await scripts.forceUnlock('f')).toBe(true);
    expect(await scripts.forceUnlock('f')).toBe(false);
    expect(await admin().exists('f')).toBe(0);
    await admin().ping();
    expect(messages).toEqual(['0']);
  });

  it('runs by EVALSHA and reloads with EVAL once after SCRIPT FLUSH', async () => {
    await scripts.acquire('x', owner, 1_000, 0);
    const scriptCalls = async (): Promise<[number, number]> => {
      const counts = await commandCounts(admin());
      return [counts.get('evalsha') ?? 0, counts.get('eval') ?? 0];
    };
    const [sha0, eval0] = await scriptCalls();
    await scripts.acquire('x', owner, 1_000, 1);
    expect(await scriptCalls()).toEqual([sha0 + 1, eval0]);
    await admin().script('FLUSH');
    await scripts.acquire('x', owner, 1_000, 2);
    await scripts.acquire('x', owner, 1_000, 3);
    expect(await scriptCalls()).toEqual([sha0 + 3, eval0 + 1]);
    expect(await admin().hget('x', owner)).toBe('4');
  });
});

describe('unlock latches', () => {
  it("an unlock's latch is deleted by a DEL written before the unlock resolves: the connection's next command finds it gone", async () => {
    const redis = server().connect();
    const redisson = new RedissonClient(redis);
    try {
      for (const lock of [redisson.getLock('l'), redisson.getFairLock('f'), redisson.getReadWriteLock('rw').writeLock()]) {
        await lock.lock({ threadId: 1 });
        await lock.lock({ threadId: 1 });
        await lock.unlock({ threadId: 1 }); // a re-entrant hold's unlock writes a latch too
        expect(await redis.keys('redisson_unlock_latch:*')).toEqual([]);
        await lock.unlock({ threadId: 1 });
        expect(await redis.keys('redisson_unlock_latch:*')).toEqual([]);
      }
    } finally {
      await redisson.shutdown();
    }
  });

  it('latches dropped in one run of microtasks go in one DEL per slot, sent before the next macrotask, and settled() waits for it', async () => {
    const redis = server().connect();
    try {
      const keys = ['a', 'b', 'c', 'd'].map((name) => `redisson_unlock_latch:{${name}}:${newRequestId()}`);
      for (const key of keys) await redis.set(key, '1', 'PX', 20_000);
      const slots = new Map([...keys.entries()].map(([i, key]) => [key, i % 2])); // two slots, as a cluster might
      const errors: unknown[] = [];
      const latches = new UnlockLatches(redis, (key) => slots.get(key)!, (error) => errors.push(error));
      const sent = jest.spyOn(redis, 'sendCommand');
      for (const key of keys) latches.drop(key);
      expect(sent).not.toHaveBeenCalled(); // queued behind the callbacks of this run of microtasks
      await Promise.resolve();
      const dels = sent.mock.calls.map(([command]) => command).filter((command) => command.name === 'del');
      expect(dels.map((command) => command.args)).toEqual([
        [keys[0], keys[2]],
        [keys[1], keys[3]],
      ]);
      sent.mockRestore();
      await latches.settled();
      expect(await redis.exists(...keys)).toBe(0);
      expect(errors).toEqual([]);
    } finally {
      redis.disconnect();
    }
  });

  it('a process that exits right after its unlocks, without shutdown(), leaves no latch behind', async () => {
    const child = spawn(process.execPath, [join(__dirname, 'fixtures', 'unlock-and-exit.mjs'), server().url, 'exit'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = (await once(child, 'exit')) as [number];
    expect(stderr).toBe('');
    expect(code).toBe(0);
    // Latches live 16-20 s unless deleted: any left now was left by the process.
    expect(await admin().keys('redisson_unlock_latch:*')).toEqual([]);
    expect(await admin().keys('exit:*')).toEqual([]);
  });
});
