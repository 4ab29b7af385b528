import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { version } from '../package.json';
import { InvalidArgumentError, ownerRecordKey, type LockHolder } from '../lib';
import { ROOT, run, runOk } from './helpers/consumer';
import { delay, useRedis } from './helpers/fixture';

// "Who holds it": clients that describe themselves (ownerInfo), labelled owner scopes, and what
// lock.holders() and the CLI make of them, across processes and for a Java-format holder.
jest.setTimeout(120_000);

const { admin, server, client } = useRedis();
const CLI = join(ROOT, 'dist', 'cli.js');
const HOLDER = join(__dirname, 'fixtures', 'labelled-holder.mjs');
const JAVA = '8fe4a548-fa9f-42a3-8482-1d24d038f24f';

beforeAll(async () => {
  if (!existsSync(CLI)) await runOk('npm', ['run', 'build']);
});

const children: ChildProcessWithoutNullStreams[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

/** Starts a labelled holder process; resolves its client id and a promise of its `acquired` line. */
async function startHolder(name: string, service: string, label: string, watchdog = 30_000) {
  const child = spawn(process.execPath, [HOLDER, server().url, name, service, label, String(watchdog)]);
  children.push(child);
  let out = '';
  let err = '';
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const lines = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`holder exited ${code}: ${err}`)));
  });
  await lines;
  const clientId = out.split('\n')[0]!;
  const acquired = new Promise<void>((resolve) => {
    const check = (): void => {
      if (out.includes('acquired\n')) resolve();
    };
    child.stdout.on('data', check);
    check();
  });
  return { child, clientId, acquired };
}

/** Polls `read` until `done` holds of its value (a loaded machine starts processes slowly). */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > end) return value;
    await delay(100);
  }
}

describe('holders() and the CLI across processes', () => {
  it('name the service, pid and label of a holder and two queued waiters in three processes', async () => {
    const a = await startHolder('stock:42', 'checkout', 'order 42 checkout');
    await a.acquired;
    const b = await startHolder('stock:42', 'billing', 'invoice 7');
    const c = await startHolder('stock:42', 'shipping', 'parcel 9');
    const lock = client().getFairLock('stock:42');
    const holders = await until(
      () => lock.holders(),
      (h) => h.length === 3 && h.every((x) => x.recorded),
    );
    const byClient = new Map(holders.map((h) => [h.clientId, h]));
    const pids = new Map([a, b, c].map((p) => [p.clientId, p.child.pid]));
    expect(byClient.get(a.clientId)).toMatchObject({
      role: 'holder',
      holds: 1,
      recorded: true,
      service: 'checkout',
      label: 'order 42 checkout',
      pid: pids.get(a.clientId),
      host: hostname(),
      version,
      extra: { team: 'payments' },
    });
    expect(byClient.get(b.clientId)).toMatchObject({
      role: 'waiter',
      holds: 0,
      service: 'billing',
      label: 'invoice 7',
      pid: pids.get(b.clientId),
    });
    expect(byClient.get(c.clientId)).toMatchObject({
      role: 'waiter',
      holds: 0,
      service: 'shipping',
      label: 'parcel 9',
      pid: pids.get(c.clientId),
    });
    expect(holders.filter((h) => h.role === 'waiter').map((h) => h.position)).toEqual([1, 2]);
    for (const h of holders) {
      if (!h.recorded) throw new Error('unrecorded');
      expect(Date.parse(h.since!)).toBeGreaterThan(Date.now() - 120_000);
      expect(Date.parse(h.startedAt!)).toBeLessThanOrEqual(Date.parse(h.since!));
    }

    const text = await run(process.execPath, [CLI, '--url', server().url, 'inspect', 'stock:42'], { timeout: 60_000 });
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(
      `who      checkout on ${hostname()} pid ${a.child.pid} ioredisson ${version}, "order 42 checkout" since`,
    );
    expect(text.stdout).toMatch(new RegExp(`who +billing on .* pid ${b.child.pid} .*"invoice 7" since`));
    expect(text.stdout).toMatch(new RegExp(`who +shipping on .* pid ${c.child.pid} .*"parcel 9" since`));
    expect(text.stdout).toContain('team=payments');
    const json = JSON.parse(
      await runOk(process.execPath, [CLI, '--url', server().url, 'inspect', 'stock:42', '--json']),
    ) as {
      owners: { record: LockHolder }[];
      queue: { record: LockHolder }[];
    };
    expect(json.owners[0]!.record).toMatchObject({
      recorded: true,
      service: 'checkout',
      pid: a.child.pid,
      label: 'order 42 checkout',
    });
    expect(json.queue.map((w) => w.record)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ service: 'billing', label: 'invoice 7' }),
        expect.objectContaining({ service: 'shipping', label: 'parcel 9' }),
      ]),
    );
    const listed = await runOk(process.execPath, [CLI, '--url', server().url, 'list']);
    expect(listed).toMatch(
      new RegExp(
        `stock:42 +fairLock +held by ${a.clientId}:\\d+ x1 \\(checkout pid ${a.child.pid} "order 42 checkout"\\)`,
      ),
    );
    expect(listed).not.toContain('ioredisson:client');

    // The holder releases at the end of its scope: the next in line takes over, labelled as its own.
    a.child.stdin.end();
    await once(a.child, 'exit');
    const next = await until(
      () => lock.holders(),
      (h) => h.some((x) => x.role === 'holder'),
    );
    const holder = next.find((h) => h.role === 'holder')!;
    expect(holder.clientId === b.clientId || holder.clientId === c.clientId).toBe(true);
    expect(holder).toMatchObject({ recorded: true, label: holder.clientId === b.clientId ? 'invoice 7' : 'parcel 9' });
    expect(await admin().exists(ownerRecordKey(a.clientId))).toBe(0); // shutdown deletes the record
  });

  it("a SIGKILLed client's record expires within its TTL (twice the watchdog timeout)", async () => {
    const watchdog = 1_000;
    const p = await startHolder('killed', 'batch', 'nightly', watchdog);
    await p.acquired;
    const key = ownerRecordKey(p.clientId);
    const ttl = await until(
      () => admin().pttl(key),
      (ms) => ms > 0,
    );
    expect(ttl).toBeLessThanOrEqual(2 * watchdog);
    // Renewal rounds keep it alive past its TTL while the process lives.
    await delay(3 * watchdog);
    expect(await admin().pttl(key)).toBeGreaterThan(0);
    p.child.kill('SIGKILL');
    await once(p.child, 'exit');
    const killedAt = Date.now();
    await until(
      () => admin().exists(key),
      (n) => n === 0,
      10_000,
    );
    expect(await admin().exists(key)).toBe(0);
    expect(Date.now() - killedAt).toBeLessThan(2 * watchdog + 1_000);
  });
});

describe('holders() in one process', () => {
  it('shows a Java-format holder as recorded: false, and the CLI as no record', async () => {
    await admin().hset('order:7', `${JAVA}:57`, '2');
    expect(
      await client({ ownerInfo: { service: 'ops' } })
        .getLock('order:7')
        .holders(),
    ).toEqual([{ role: 'holder', owner: `${JAVA}:57`, clientId: JAVA, threadId: 57, holds: 2, recorded: false }]);
    const text = await runOk(process.execPath, [CLI, '--url', server().url, 'inspect', 'order:7']);
    expect(text).toMatch(/who +no record \(a Java client, or one without ownerInfo\)/);
  });

  it('a client without ownerInfo writes nothing and reads as no record; a label still works', async () => {
    const redisson = client();
    const lock = redisson.getLock('plain');
    await redisson.run(
      async () => {
        await lock.lock();
        expect(await lock.holders()).toEqual([
          {
            role: 'holder',
            owner: expect.stringMatching(`^${redisson.id}:\\d+$`),
            clientId: redisson.id,
            threadId: expect.any(Number),
            holds: 1,
            recorded: false,
          },
        ]);
        await lock.unlock();
      },
      { label: 'no record' },
    );
    expect(await admin().keys('ioredisson:client:*')).toEqual([]);
  });

  it('read/write lock holders carry their mode; an unlabelled scope has no label or since', async () => {
    const redisson = client({ ownerInfo: { service: 'reports', host: 'given-host' } });
    const rw = redisson.getReadWriteLock('doc');
    const write = await rw.writeLock().acquire();
    const holders = await rw.readLock().holders();
    expect(holders).toEqual([
      {
        role: 'holder',
        owner: `${redisson.id}:${write.threadId}:write`,
        clientId: redisson.id,
        threadId: write.threadId,
        holds: 1,
        mode: 'write',
        recorded: true,
        service: 'reports',
        host: 'given-host',
        pid: process.pid,
        version,
        startedAt: expect.any(String),
        extra: {},
      },
    ]);
    await write.release();
  });

  it("a scope's label leaves the record with the next write after the scope ends", async () => {
    const redisson = client({ ownerInfo: { service: 'svc' } });
    const key = ownerRecordKey(redisson.id);
    let threadId = 0;
    await redisson.run(
      async () => {
        const handle = await redisson.getLock('a').acquire();
        threadId = handle.threadId;
        expect(JSON.parse((await admin().hget(key, `t:${threadId}`))!)).toEqual({
          label: 'first',
          since: expect.any(Number),
        });
        await handle.release();
      },
      { label: 'first' },
    );
    await redisson.run(async () => redisson.getLock('b').using(() => delay(1)), { label: 'second' });
    expect(await admin().hexists(key, `t:${threadId}`)).toBe(0);
    expect(JSON.parse((await admin().hget(key, 'info'))!)).toMatchObject({ service: 'svc', pid: process.pid });
    expect(await admin().pttl(key)).toBeLessThanOrEqual(2 * redisson.options.lockWatchdogTimeout);
  });

  it('validates ownerInfo and the run() options', () => {
    expect(() => client({ ownerInfo: { service: '' } })).toThrow(InvalidArgumentError);
    expect(() => client({ ownerInfo: { service: 'x', nested: {} as unknown as string } })).toThrow(/ownerInfo.nested/);
    expect(() => client({ ownerInfo: 'svc' as unknown as { service: string } })).toThrow(/ownerInfo must be an object/);
    const redisson = client();
    expect(() => redisson.run(() => 1, { label: 3 as unknown as string })).toThrow(/label must be a non-empty string/);
    expect(() => redisson.run(() => 1, { labels: 'x' } as unknown as { label: string })).toThrow(InvalidArgumentError);
    expect(redisson.run(() => 1, { label: 'ok' })).toBe(1);
  });
});
