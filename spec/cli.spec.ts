import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, run, runOk, type RunResult } from './helpers/consumer';
import { useRedis } from './helpers/fixture';
import { commandCounts, freePort } from './helpers/redis-server';

// The `ioredisson` command against a real Redis, on data written by hand in Redisson's formats
// (HSET/RPUSH/ZADD/SET exactly as Java Redisson's scripts leave them) and by ioredisson itself.
jest.setTimeout(120_000);

const { admin, server, client } = useRedis();
const CLI = join(ROOT, 'dist', 'cli.js');
const JAVA = '8fe4a548-fa9f-42a3-8482-1d24d038f24f';

beforeAll(async () => {
  if (!existsSync(CLI)) await runOk('npm', ['run', 'build']);
});

const cli = (...args: string[]): Promise<RunResult> => run(process.execPath, [CLI, '--url', server().url, ...args], { timeout: 60_000 });
async function json(...args: string[]): Promise<Record<string, any>> {
  const result = await cli(...args, '--json');
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
  return JSON.parse(result.stdout) as Record<string, any>;
}

describe('inspect', () => {
  it('a lock: owner, hold count, lease', async () => {
    await admin().hset('order:42', `${JAVA}:57`, '2');
    await admin().pexpire('order:42', 30_000);
    const text = await cli('inspect', 'order:42');
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^order:42: lock \(RLock/);
    expect(text.stdout).toMatch(new RegExp(`owner +${JAVA} thread 57: holds 2`));
    // The CLI starts a Node process after the PEXPIRE: on a loaded machine that takes seconds.
    const left = Number(/held, lease (\d+\.\d) s left/.exec(text.stdout)?.[1]);
    expect(left).toBeGreaterThan(10);
    expect(left).toBeLessThanOrEqual(30);
    expect(text.stdout).toMatch(/channel +redisson_lock__channel:\{order:42\} \(0 listening\)/);
    const report = await json('inspect', 'order:42');
    expect(report).toMatchObject({ name: 'order:42', kind: 'lock', exists: true, owners: [{ clientId: JAVA, threadId: '57', holds: 2 }] });
    expect(report.ttl).toBeGreaterThan(25_000);
  });

  it('a lock ioredisson holds, with a waiter listening on its channel', async () => {
    const redisson = client();
    const other = client();
    const handle = await redisson.getLock('job').acquire();
    const waiting = other.getLock('job').tryLock({ waitTime: 5_000 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const report = await json('inspect', 'job');
    expect(report).toMatchObject({ kind: 'lock', owners: [{ clientId: redisson.id, threadId: String(handle.threadId), holds: 1 }] });
    expect(report.channel).toEqual({ name: 'redisson_lock__channel:{job}', subscribers: 1 });
    await handle.release();
    expect(await waiting).toBe(true);
    await other.getLock('job').forceUnlock();
  });

  it('a fair lock: holder, queue in order, deadlines', async () => {
    const now = Date.now();
    await admin().hset('fair', `${JAVA}:1`, '1');
    await admin().pexpire('fair', 30_000);
    await admin().rpush('redisson_lock_queue:{fair}', `${JAVA}:2`, `${JAVA}:3`);
    await admin().zadd('redisson_lock_timeout:{fair}', now + 330_000, `${JAVA}:2`, now + 630_000, `${JAVA}:3`);
    const text = await cli('inspect', 'fair');
    expect(text.stdout).toMatch(/^fair: fair lock \(RFairLock\)/);
    expect(text.stdout).toMatch(/queue +2 waiting \(redisson_lock_queue:\{fair\}\)/);
    expect(text.stdout).toMatch(new RegExp(`#1 +${JAVA} thread 2, deadline .*\\(in 3[23]\\d\\.\\d s\\)`));
    const report = await json('inspect', 'fair');
    expect(report.kind).toBe('fairLock');
    expect(report.queue.map((w: { threadId: string }) => w.threadId)).toEqual(['2', '3']);
    expect(report.queue[1].deadline).toBe(now + 630_000);
    expect(report.channel.name).toBe(`redisson_lock__channel:{fair}:${JAVA}:2`);
  });

  it('a fair lock with only stale waiters left: free, the dead waiter noted', async () => {
    await admin().rpush('redisson_lock_queue:{q}', `${JAVA}:9`);
    await admin().zadd('redisson_lock_timeout:{q}', Date.now() - 1_000, `${JAVA}:9`);
    const report = await json('inspect', 'q');
    expect(report).toMatchObject({ kind: 'fairLock', exists: false, owners: [] });
    expect(report.notes.join(' ')).toMatch(/past their deadline/);
  });

  it('a read/write lock: mode, readers with their rwlock_timeout leases, a writer', async () => {
    await admin().hset('rw', 'mode', 'read', `${JAVA}:5`, '2');
    await admin().set(`{rw}:${JAVA}:5:rwlock_timeout:1`, '1', 'PX', 30_000);
    await admin().set(`{rw}:${JAVA}:5:rwlock_timeout:2`, '1', 'PX', 20_000);
    await admin().pexpire('rw', 30_000);
    const report = await json('inspect', 'rw');
    expect(report).toMatchObject({ kind: 'readWriteLock', mode: 'read', owners: [{ threadId: '5', side: 'read', holds: 2 }] });
    expect(report.owners[0].readLeases[0]).toBeGreaterThan(25_000);
    expect(report.owners[0].readLeases[1]).toBeLessThanOrEqual(20_000);
    expect(report.channel.name).toBe('redisson_rwlock:{rw}');

    await admin().hset('{t1}:w', 'mode', 'write', `${JAVA}:6:write`, '1');
    const write = await cli('inspect', '{t1}:w');
    expect(write.stdout).toMatch(/mode +write/);
    expect(write.stdout).toMatch(/thread 6: write holds 1/);
    expect(write.stdout).toMatch(/redisson_rwlock:\{t1\}:w/);
  });

  it('a read/write lock whose reader lost its timeout keys is flagged as a dead reader', async () => {
    await admin().hset('rw2', 'mode', 'read', `${JAVA}:7`, '1');
    const report = await json('inspect', 'rw2');
    expect(report.owners[0].readLeases).toEqual([-2]);
    expect(report.notes.join(' ')).toMatch(/dead reader/);
  });

  it('a fenced lock: holder and token, and the token after release', async () => {
    await admin().hset('fenced', `${JAVA}:9`, '1');
    await admin().set('redisson_lock_token:{fenced}', '17');
    expect(await json('inspect', 'fenced')).toMatchObject({ kind: 'fencedLock', token: '17', owners: [{ holds: 1 }] });
    await admin().del('fenced');
    expect(await json('inspect', 'fenced')).toMatchObject({ kind: 'fencedLock', token: '17', exists: false, owners: [] });
    expect((await cli('inspect', 'fenced')).stdout).toMatch(/state +free/);
  });

  it('a group multi-lock: each value field with its owner, hold count and expiry', async () => {
    // Redisson's fields for 'Jack_001' and 'Mary_002' (Kryo5Codec bytes, HighwayHash-128 in Base64).
    const [jack, mary] = ['DScHoUUqdQJ9J7Ux220rcQ', '+ZZbsYCpCEvhG9irFt/3NQ'];
    const now = Date.now();
    await admin().hset('class_100', {
      [jack]: `${JAVA}:1`,
      [`${jack}:${JAVA}:1:expire_time`]: String(now + 30_000),
      [`${jack}:${JAVA}:1:lock_count`]: '2',
      [mary]: `${JAVA}:7`,
      [`${mary}:${JAVA}:7:expire_time`]: String(now - 1_000),
      [`${mary}:${JAVA}:7:lock_count`]: '1',
    });
    await admin().pexpire('class_100', 30_000);
    const report = await json('inspect', 'class_100');
    expect(report).toMatchObject({ kind: 'fasterMultiLock', channel: { name: 'redisson_lock__channel:{class_100}' } });
    expect(report.values).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ field: jack, clientId: JAVA, threadId: '1', holds: 2, expiresAt: now + 30_000 }),
        expect.objectContaining({ field: mary, clientId: JAVA, threadId: '7', holds: 1, expiresAt: now - 1_000 }),
      ]),
    );
    expect(report.notes.join(' ')).toMatch(/1 value\(s\) past their holder's expiry/);
    const text = (await cli('inspect', 'class_100')).stdout;
    expect(text).toMatch(new RegExp(`value +${jack.replace(/[+/]/g, '\\$&')}: ${JAVA} thread 1, holds 2, expires in`));
    expect(text).toMatch(/thread 7, holds 1, expired/);
    // And a group locked by ioredisson itself.
    await client().getMultiLock('seats', ['A1', 'A2']).lock({ threadId: 3 });
    expect((await json('inspect', 'seats')).values).toHaveLength(2);
  });

  it('a semaphore and a count-down latch (the same string counter; --as and listeners decide)', async () => {
    await admin().set('sem', '3');
    expect(await json('inspect', 'sem')).toMatchObject({ kind: 'semaphore', permits: 3 });
    expect((await cli('inspect', 'sem')).stdout).toMatch(/permits +3 available/);
    expect(await json('inspect', 'sem', '--as', 'latch')).toMatchObject({ kind: 'countDownLatch', count: 3 });
    await admin().set('drained', '0');
    expect(await json('inspect', 'drained')).toMatchObject({ kind: 'semaphore', permits: 0 });

    await admin().set('latch', '2');
    const listener = server().connect();
    await listener.subscribe('redisson_countdownlatch__channel__{latch}');
    const latch = await json('inspect', 'latch');
    expect(latch).toMatchObject({ kind: 'countDownLatch', count: 2, channel: { name: 'redisson_countdownlatch__channel__{latch}', subscribers: 1 } });
    expect((await cli('inspect', 'latch')).stdout).toMatch(/count +2 \(opens at 0\)/);
  });

  it('a permit-expirable semaphore: 16-byte permit ids as 32 hex, expiries', async () => {
    const now = Date.now();
    const forever = Buffer.from('00112233445566778899aabbccddeeff', 'hex');
    const leased = Buffer.from('ffeeddccbbaa99887766554433221100', 'hex');
    const expired = Buffer.from('0123456789abcdef0123456789abcdef', 'hex');
    await admin().set('pes', '1');
    await admin().zadd('{pes}:timeout', 922337203685477, forever, now + 60_000, leased, now - 5_000, expired);
    const report = await json('inspect', 'pes');
    expect(report).toMatchObject({ kind: 'permitExpirableSemaphore', permits: 1 });
    const byId = Object.fromEntries(report.acquired.map((p: { id: string }) => [p.id, p]));
    expect(byId['00112233445566778899aabbccddeeff']).toMatchObject({ expiresAt: null, expired: false });
    expect(byId['ffeeddccbbaa99887766554433221100']).toMatchObject({ expiresAt: now + 60_000, expired: false });
    expect(byId['0123456789abcdef0123456789abcdef']).toMatchObject({ expired: true });
    const text = await cli('inspect', 'pes');
    expect(text.stdout).toMatch(/permits +1 available, 3 acquired/);
    expect(text.stdout).toMatch(/00112233445566778899aabbccddeeff, never expires/);
    expect(text.stdout).toMatch(/1 permit\(s\) expired/);
  });
});

describe('errors', () => {
  it('a missing name: exit 1 and a hint', async () => {
    const result = await cli('inspect', 'nobody');
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/nothing is stored under 'nobody'/);
    const asJson = await cli('inspect', 'nobody', '--json');
    expect(JSON.parse(asJson.stderr)).toMatchObject({ exitCode: 1, error: expect.stringMatching(/nothing is stored/) });
  });

  it('a derived key given as the name points at its object', async () => {
    await admin().rpush('redisson_lock_queue:{fair}', `${JAVA}:2`);
    const result = await cli('inspect', 'redisson_lock_queue:{fair}');
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/fair-lock queue key of 'fair'/);
  });

  it('a wrong type: exit 3', async () => {
    await admin().set('greeting', 'hello');
    await admin().hset('user:1', 'email', 'a@b.c');
    await admin().sadd('tags', 'x');
    for (const name of ['greeting', 'user:1', 'tags']) {
      const result = await cli('inspect', name);
      expect({ name, code: result.code }).toEqual({ name, code: 3 });
      expect(result.stderr).toMatch(/not a Redisson|no Redisson/);
    }
  });

  it('an unreachable server: exit 4, naming the URL', async () => {
    const port = await freePort();
    const result = await run(process.execPath, [CLI, '--url', `redis://:secret@127.0.0.1:${port}`, 'inspect', 'x'], { timeout: 30_000 });
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(new RegExp(`cannot reach Redis at redis://:\\*\\*\\*@127\\.0\\.0\\.1:${port}.*ECONNREFUSED`));
    expect(result.stderr).not.toMatch(/secret|Unhandled/);
  });

  it('bad usage: exit 2', async () => {
    expect((await cli('inspect')).code).toBe(2);
    expect((await cli('frobnicate', 'x')).code).toBe(2);
    expect((await cli('watch', 'x', '--interval', 'soon')).code).toBe(2);
    expect((await cli('inspect', 'x', '--as', 'mutex')).code).toBe(2);
    const help = await cli('--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/force-unlock <name>/);
    // No command is bad usage too: a script that forgot its command must not pass.
    const none = await cli();
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/no command given/);
  });

  it('--version prints the package version without connecting', async () => {
    const { version } = (await import('../package.json')) as { version: string };
    const port = await freePort();
    for (const flag of ['--version', '-v']) {
      const result = await run(process.execPath, [CLI, '--url', `redis://127.0.0.1:${port}`, flag]);
      expect(result).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
    }
  });
});

describe('list', () => {
  it('finds every object with SCAN, never KEYS, grouped with its derived keys', async () => {
    await admin().hset('order:1', `${JAVA}:1`, '1');
    await admin().hset('order:2', `${JAVA}:2`, '3');
    await admin().rpush('redisson_lock_queue:{order:3}', `${JAVA}:4`);
    await admin().zadd('redisson_lock_timeout:{order:3}', Date.now() + 60_000, `${JAVA}:4`);
    await admin().set('redisson_unlock_latch:{order:1}:0123456789abcdef0123456789abcdef', '1', 'PX', 10_000);
    await admin().set('permits', '4');
    await admin().set('unrelated', 'text');
    const before = await commandCounts(admin());
    const rows = (await json('list')) as unknown as { name: string; kind: string }[];
    const after = await commandCounts(admin());
    expect(rows.map((r) => [r.name, r.kind])).toEqual([
      ['order:1', 'lock'],
      ['order:2', 'lock'],
      ['order:3', 'fairLock'],
      ['permits', 'semaphore'],
    ]);
    expect(after.get('keys') ?? 0).toBe(before.get('keys') ?? 0);
    expect((after.get('scan') ?? 0) - (before.get('scan') ?? 0)).toBeGreaterThan(0);

    const filtered = (await json('list', 'order:*')) as unknown as { name: string }[];
    expect(filtered.map((r) => r.name)).toEqual(['order:1', 'order:2', 'order:3']);
    const text = await cli('list', 'order:*');
    expect(text.stdout).toMatch(/^NAME +KIND +STATE/);
    expect(text.stdout).toMatch(new RegExp(`order:2 +lock +held by ${JAVA}:2 x3`));
  });
});

describe('watch', () => {
  it('refreshes every --interval, one JSON document per line, free included', async () => {
    await admin().hset('w', `${JAVA}:1`, '1');
    const started = Date.now();
    const result = await cli('watch', 'w', '--interval', '200', '--times', '3', '--json');
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n').map((line) => JSON.parse(line) as { at: string; report: { kind: string } | null });
    expect(lines).toHaveLength(3);
    expect(lines[0]!.report?.kind).toBe('lock');
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    const free = await cli('watch', 'gone', '--interval', '100', '--times', '1');
    expect(free.code).toBe(0);
    expect(free.stdout).toMatch(/gone: nothing stored \(free\)/);
  });
});

describe('force-unlock', () => {
  async function messagesOn(channel: string, act: () => Promise<unknown>): Promise<string[]> {
    const listener = server().connect();
    const got: string[] = [];
    listener.on('message', (ch: string, message: string) => {
      if (ch === channel) got.push(message);
    });
    await listener.subscribe(channel);
    await act();
    await new Promise((resolve) => setTimeout(resolve, 200));
    return got;
  }

  it('refuses without --yes and changes nothing', async () => {
    await admin().hset('l', `${JAVA}:1`, '1');
    const before = await commandCounts(admin());
    const result = await cli('force-unlock', 'l');
    expect(result.code).toBe(5);
    expect(result.stderr).toMatch(/without --yes/);
    expect(await admin().exists('l')).toBe(1);
    // Refused before connecting: not a command reached Redis.
    const after = await commandCounts(admin());
    expect([...after].filter(([name, calls]) => name !== 'info' && name !== 'exists' && calls !== before.get(name))).toEqual([]);
    const port = await freePort();
    expect((await run(process.execPath, [CLI, '--url', `redis://127.0.0.1:${port}`, 'force-unlock', 'l'])).code).toBe(5);
  });

  it('a lock: deletes it and publishes 0 on its channel, as Redisson does, waking a waiter', async () => {
    await admin().hset('l', `${JAVA}:1`, '2');
    const waiter = client();
    const waiting = waiter.getLock('l').tryLock({ waitTime: 20_000 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const started = Date.now();
    const messages = await messagesOn('redisson_lock__channel:{l}', async () => {
      const result = await cli('force-unlock', 'l', '--yes');
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/force-unlocked l \(held by .*:1 x2\); published 0 on redisson_lock__channel:\{l\}/);
    });
    expect(messages).toEqual(['0']);
    expect(await waiting).toBe(true);
    expect(Date.now() - started).toBeLessThan(10_000);
    await waiter.getLock('l').forceUnlock();
  });

  it('a group multi-lock: every value goes, and 0 on the group channel wakes a waiter', async () => {
    const holder = client();
    await holder.getMultiLock('g', ['a', 'b']).lock({ threadId: 1, leaseTime: 60_000 });
    const waiter = client();
    const waiting = waiter.getMultiLock('g', ['b', 'c']).tryLock({ threadId: 2, waitTime: 20_000 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const result = await json('force-unlock', 'g', '--yes');
    expect(result).toMatchObject({ kind: 'fasterMultiLock', unlocked: true, published: { channel: 'redisson_lock__channel:{g}', message: '0' } });
    expect(await waiting).toBe(true);
    await waiter.getMultiLock('g', ['b', 'c']).unlock({ threadId: 2 });
  });

  it('a fenced lock: the hold goes, the token stays', async () => {
    await admin().hset('f', `${JAVA}:1`, '1');
    await admin().set('redisson_lock_token:{f}', '5');
    const result = await json('force-unlock', 'f', '--yes');
    expect(result).toMatchObject({ kind: 'fencedLock', unlocked: true, published: { channel: 'redisson_lock__channel:{f}', message: '0' } });
    expect(await admin().exists('f')).toBe(0);
    expect(await admin().get('redisson_lock_token:{f}')).toBe('5');
  });

  it('a write lock publishes 1 on the read/write channel; a read lock 0', async () => {
    await admin().hset('rw', 'mode', 'write', `${JAVA}:1:write`, '1');
    expect(await messagesOn('redisson_rwlock:{rw}', () => cli('force-unlock', 'rw', '--yes'))).toEqual(['1']);
    expect(await admin().exists('rw')).toBe(0);
    await admin().hset('rw', 'mode', 'read', `${JAVA}:2`, '1');
    expect(await messagesOn('redisson_rwlock:{rw}', () => cli('force-unlock', 'rw', '--yes'))).toEqual(['0']);
  });

  it('a fair lock: drops stale heads, deletes the lock, tells the live head on its own channel', async () => {
    const now = Date.now();
    await admin().hset('fl', `${JAVA}:1`, '1');
    await admin().rpush('redisson_lock_queue:{fl}', `${JAVA}:2`, `${JAVA}:3`);
    await admin().zadd('redisson_lock_timeout:{fl}', now - 1_000, `${JAVA}:2`, now + 60_000, `${JAVA}:3`);
    const messages = await messagesOn(`redisson_lock__channel:{fl}:${JAVA}:3`, () => cli('force-unlock', 'fl', '--yes'));
    expect(messages).toEqual(['0']);
    expect(await admin().exists('fl')).toBe(0);
    expect(await admin().lrange('redisson_lock_queue:{fl}', 0, -1)).toEqual([`${JAVA}:3`]);
    expect(await admin().zrange('redisson_lock_timeout:{fl}', 0, -1)).toEqual([`${JAVA}:3`]);
  });

  it('refuses semaphores and latches with exit 5, and a missing name with exit 1', async () => {
    await admin().set('s', '2');
    const result = await cli('force-unlock', 's', '--yes');
    expect(result.code).toBe(5);
    expect(result.stderr).toMatch(/semaphore .* no holder to force out/);
    expect(await admin().get('s')).toBe('2');
    expect((await cli('force-unlock', 'nothing-here', '--yes')).code).toBe(1);
  });
});
