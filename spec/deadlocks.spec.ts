import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  DeadlockError,
  InvalidArgumentError,
  LockAcquireTimeoutError,
  ownerRecordKey,
  type DeadlockWait,
  type RedissonEvents,
} from '../lib';
import { ROOT, runOk } from './helpers/consumer';
import { delay, useRedis } from './helpers/fixture';
import { eventually } from './helpers/redis-server';

// Deadlock detection (option deadlockDetection): cycles of owner scopes across processes and lock
// kinds are found, exactly one wait of each gives up, and contention without a cycle gives none.
jest.setTimeout(180_000);

const { admin, server, client } = useRedis();
const CLI = join(ROOT, 'dist', 'cli.js');
const WORKER = join(__dirname, 'fixtures', 'deadlock-worker.mjs');
const CONTENDER = join(__dirname, 'fixtures', 'ordered-contender.mjs');
/** The `after` of the tests: short, so that they are quick; the bound asserted is `after` + 1 s. */
const AFTER = 300;

beforeAll(async () => {
  if (!existsSync(CLI)) await runOk('npm', ['run', 'build']);
});

const children: ChildProcessWithoutNullStreams[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

type WorkerEvent =
  | { event: 'held'; clientId: string }
  | { event: 'acquired'; ms: number }
  | { event: 'deadlock'; ms: number; lockName: string; cycle: DeadlockWait[]; message: string };

/** A deadlock-worker process: its JSON lines as they come, and its stdin. */
function startWorker(service: string, hold: string, wait: string) {
  const child = spawn(process.execPath, [WORKER, server().url, service, String(AFTER), hold, wait]);
  children.push(child);
  const events: WorkerEvent[] = [];
  let err = '';
  let out = '';
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    const lines = out.split('\n');
    out = lines.pop()!;
    for (const line of lines) events.push(JSON.parse(line) as WorkerEvent);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  /** The first event of `type`; rejects if the process exits first. */
  const next = async <T extends WorkerEvent['event']>(type: T): Promise<Extract<WorkerEvent, { event: T }>> => {
    for (;;) {
      const found = events.find((e) => e.event === type);
      if (found) return found as Extract<WorkerEvent, { event: T }>;
      if (child.exitCode !== null) throw new Error(`${service} exited ${child.exitCode} before '${type}': ${err}`);
      await delay(20);
    }
  };
  return { child, events, next, exited, stderr: () => err };
}

/**
 * Starts one worker per link of the ring (each holds its own lock and waits for the next one's),
 * lets them all wait at once, and resolves each one's outcome once every one has an outcome.
 */
async function ring(links: readonly { service: string; hold: string; wait: string }[]) {
  const workers = links.map(({ service, hold, wait }) => startWorker(service, hold, wait));
  const held = await Promise.all(workers.map((w) => w.next('held')));
  for (const w of workers) w.child.stdin.write('go\n');
  const outcome = (w: (typeof workers)[number]) => Promise.race([w.next('acquired'), w.next('deadlock')]);
  const outcomes = await Promise.all(workers.map(outcome));
  for (const w of workers) w.child.stdin.end();
  const codes = await Promise.all(workers.map((w) => w.exited));
  expect({ codes, stderr: workers.map((w) => w.stderr()) }).toEqual({
    codes: workers.map(() => 0),
    stderr: workers.map(() => ''),
  });
  return { outcomes, clientIds: held.map((h) => h.clientId) };
}

describe('deadlocks across processes', () => {
  it('two processes on RLocks: exactly one wait gives up within after + 1 s, naming both waits', async () => {
    const { outcomes, clientIds } = await ring([
      { service: 'orders', hold: 'rlock:account:1', wait: 'rlock:account:2' },
      { service: 'refunds', hold: 'rlock:account:2', wait: 'rlock:account:1' },
    ]);
    const gaveUp = outcomes.filter((o) => o.event === 'deadlock');
    expect(gaveUp).toHaveLength(1);
    expect(outcomes.filter((o) => o.event === 'acquired')).toHaveLength(1);
    const victim = gaveUp[0]!;
    expect(victim.ms).toBeLessThan(AFTER + 1_000);
    const v = outcomes.indexOf(victim);
    expect(victim.cycle).toHaveLength(2);
    expect(victim.cycle[0]).toMatchObject({
      lockName: ['account:2', 'account:1'][v],
      service: ['orders', 'refunds'][v],
      label: `${['orders', 'refunds'][v]} job`,
    });
    expect(victim.cycle.map((w) => w.owner.split(':')[0])).toEqual([clientIds[v], clientIds[1 - v]]);
    expect(typeof victim.cycle[1]!.pid).toBe('number');
    // The youngest gives up: its wait began last.
    expect(Date.parse(victim.cycle[0]!.since)).toBeGreaterThanOrEqual(Date.parse(victim.cycle[1]!.since));
    expect(victim.message).toContain("waits for 'account:");
  });

  it('three processes over a fair lock, a write lock and a MultiLock member: exactly one wait gives up', async () => {
    const { outcomes } = await ring([
      { service: 'a', hold: 'fair:queue', wait: 'write:config' },
      { service: 'b', hold: 'write:config', wait: 'multi:member:1+member:2' },
      { service: 'c', hold: 'rlock:member:2', wait: 'fair:queue' },
    ]);
    const gaveUp = outcomes.filter((o) => o.event === 'deadlock');
    expect(gaveUp).toHaveLength(1);
    expect(outcomes.filter((o) => o.event === 'acquired')).toHaveLength(2);
    const victim = gaveUp[0]!;
    expect(victim.ms).toBeLessThan(AFTER + 1_000);
    expect(victim.cycle).toHaveLength(3);
    // Whoever gave up, the cycle is the ring, in ring order from the victim.
    const ringLocks = ['config', 'member:2', 'queue'];
    const first = ringLocks.indexOf(victim.cycle[0]!.lockName);
    expect(victim.cycle.map((w) => w.lockName)).toEqual([0, 1, 2].map((i) => ringLocks[(first + i) % 3]));
    expect(victim.cycle.map((w) => w.service)).toEqual([0, 1, 2].map((i) => ['a', 'b', 'c'][(first + i) % 3]));
  });

  it('8 processes in random contention on 10 locks without a cycle: no wait gives up', async () => {
    const after = 30;
    const runs = Array.from({ length: 8 }, () => {
      const child = spawn(process.execPath, [CONTENDER, server().url, String(after), '10', '20', '5']);
      children.push(child);
      let out = '';
      let err = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
      return new Promise<{ code: number | null; out: string; err: string }>((resolve) =>
        child.once('exit', (code) => resolve({ code, out, err })),
      );
    });
    const results = await Promise.all(runs);
    expect(results.map(({ code, err }) => ({ code, err }))).toEqual(results.map(() => ({ code: 0, err: '' })));
    const totals = results
      .map(({ out }) => JSON.parse(out) as { deadlocks: number; acquired: number; longWaits: number })
      .reduce((sum, r) => ({
        deadlocks: sum.deadlocks + r.deadlocks,
        acquired: sum.acquired + r.acquired,
        longWaits: sum.longWaits + r.longWaits,
      }));
    expect(totals.deadlocks).toBe(0);
    expect(totals.acquired).toBe(8 * 20 * 5 * 2);
    // Waits long enough to be recorded and searched did happen: the test exercised the detection.
    expect(totals.longWaits).toBeGreaterThan(0);
  });
});

describe('deadlocks in one client', () => {
  const options = { ownerInfo: { service: 'ledger' }, deadlockDetection: { after: AFTER } };

  it('between two owner scopes: the younger wait rejects with DeadlockError and an acquireFailed event, the older acquires', async () => {
    const redisson = client(options);
    const failed: RedissonEvents['acquireFailed'][] = [];
    redisson.on('acquireFailed', (event) => failed.push(event));
    const [first, second] = [redisson.getLock('ledger:1'), redisson.getLock('ledger:2')];
    const older = redisson.run(
      async () => {
        await first.lock();
        await delay(100);
        await second.lock(); // waits first
        await second.unlock();
        await first.unlock();
        return 'acquired';
      },
      { label: 'older' },
    );
    const younger = redisson.run(
      async () => {
        await second.lock();
        await delay(200);
        try {
          await first.lock(); // waits second: the younger wait
          return 'acquired';
        } finally {
          await second.unlock();
        }
      },
      { label: 'younger' },
    );
    const error = await younger.catch((e: unknown) => e);
    expect(await older).toBe('acquired');
    expect(error).toBeInstanceOf(DeadlockError);
    expect(error).toMatchObject({ code: 'ERR_DEADLOCK', lockName: 'ledger:1' });
    const { cycle } = error as DeadlockError;
    expect(cycle.map((w) => [w.lockName, w.label, w.service])).toEqual([
      ['ledger:1', 'younger', 'ledger'],
      ['ledger:2', 'older', 'ledger'],
    ]);
    expect(failed).toEqual([expect.objectContaining({ kind: 'lock', name: 'ledger:1', reason: 'deadlock' })]);
    // Both waits left the record once they ended.
    expect(Object.keys(await admin().hgetall(ownerRecordKey(redisson.id))).filter((f) => f.startsWith('w:'))).toEqual(
      [],
    );
  });

  it('an owner waiting for the write lock while it holds the read lock waits for itself: a cycle of one', async () => {
    const redisson = client(options);
    const rw = redisson.getReadWriteLock('settings');
    const error = await redisson
      .run(async () => {
        await rw.readLock().lock();
        try {
          await rw.writeLock().lock();
        } finally {
          await rw.readLock().unlock();
        }
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeadlockError);
    expect((error as DeadlockError).cycle).toEqual([
      expect.objectContaining({ lockName: 'settings', owner: expect.stringContaining(redisson.id) }),
    ]);
  });

  it('records a wait parked past after, and only while it waits; a shorter wait records nothing', async () => {
    const holder = client();
    const redisson = client(options);
    const held = await holder.getLock('slow').acquire();
    const key = ownerRecordKey(redisson.id);
    const waits = async () => Object.entries(await admin().hgetall(key)).filter(([field]) => field.startsWith('w:'));
    await redisson.getLock('slow').tryLock({ waitTime: AFTER / 3 });
    expect(await waits()).toEqual([]);
    const waiting = redisson.getLock('slow').acquire();
    // Recorded once parked for `after`; polled, not slept for: timers run late on a loaded machine.
    await eventually(async () => (await waits()).length === 1, 10_000, 'the recorded wait');
    const [[, recorded] = []] = await waits();
    expect(JSON.parse(recorded!)).toEqual([{ lock: 'slow', since: expect.any(Number) }]);
    await held.release();
    await (await waiting).release();
    expect(await waits()).toEqual([]);
  });

  it('a chain through an owner whose client records nothing (Java) is not a deadlock: the wait times out as usual', async () => {
    const redisson = client(options);
    const java = '8fe4a548-fa9f-42a3-8482-1d24d038f24f:1';
    await admin().hset('held-by-java', java, 1);
    const error = await redisson.run(async () => {
      await redisson.getLock('wanted-by-java').lock();
      return redisson
        .getLock('held-by-java')
        .acquire({ waitTime: AFTER + 700 })
        .catch((e: unknown) => e);
    });
    expect(error).toBeInstanceOf(LockAcquireTimeoutError);
    await admin().del('held-by-java');
  });

  it('refuses a bad deadlockDetection before anything is sent', () => {
    expect(() => client({ deadlockDetection: { after: 0 } })).toThrow(InvalidArgumentError);
    expect(() => client({ deadlockDetection: { after: 1.5 } })).toThrow(/deadlockDetection.after must be an integer/);
    expect(() => client({ deadlockDetection: { every: 5 } as never })).toThrow(
      /Unknown deadlockDetection options: every/,
    );
  });
});

describe('the CLI', () => {
  it('`waits` lists recorded waits with their holders and marks a deadlock cycle', async () => {
    const holder = client({ ownerInfo: { service: 'holder' } });
    const waiter = client({ ownerInfo: { service: 'waiter' }, deadlockDetection: { after: AFTER } });
    const held = await holder.run(() => holder.getLock('report').acquire(), { label: 'nightly report' });
    const waiting = waiter.run(() => waiter.getLock('report').acquire(), { label: 'ad-hoc report' });
    const recordedWaits = async () =>
      Object.keys(await admin().hgetall(ownerRecordKey(waiter.id))).filter((f) => f.startsWith('w:')).length;
    await eventually(async () => (await recordedWaits()) === 1, 10_000, 'the recorded wait');
    const text = await runOk(process.execPath, [CLI, 'waits', '--url', server().url]);
    expect(text).toMatch(/^1 recorded wait, 0 deadlock cycles\n/);
    expect(text).toContain(`${waiter.id}:`);
    expect(text).toMatch(/\(waiter pid \d+ "ad-hoc report"\) waits [\d.]+ (ms|s) for 'report', held by /);
    expect(text).not.toContain('[deadlock]');
    await held.release();
    await (await waiting).release();
    // A cycle as two clients with detection would leave it, had neither given up yet.
    const [a, b] = ['0a0a0a0a-0000-4000-8000-00000000000a', '0b0b0b0b-0000-4000-8000-00000000000b'];
    const since = Date.now() - 5_000;
    await admin().hset('x', `${a}:1`, 1);
    await admin().hset('y', `${b}:2`, 1);
    await admin().hset(
      ownerRecordKey(a),
      'info',
      JSON.stringify({ service: 'sa', pid: 1 }),
      'w:1',
      JSON.stringify([{ lock: 'y', since }]),
    );
    await admin().hset(
      ownerRecordKey(b),
      'info',
      JSON.stringify({ service: 'sb', pid: 2 }),
      'w:2',
      JSON.stringify([{ lock: 'x', since }]),
    );
    const json = JSON.parse(await runOk(process.execPath, [CLI, 'waits', '--json', '--url', server().url])) as {
      waits: { owner: string; inCycle: boolean }[];
      cycles: string[][];
    };
    expect(json.cycles).toEqual([[`${a}:1`, `${b}:2`]]);
    expect(json.waits.map((w) => [w.owner, w.inCycle])).toEqual([
      [`${a}:1`, true],
      [`${b}:2`, true],
    ]);
    const cycleText = await runOk(process.execPath, [CLI, 'waits', '--url', server().url]);
    expect(cycleText).toContain(`deadlock 1: ${a}:1 <-> ${b}:2`);
    expect(cycleText.match(/\[deadlock\]/g)).toHaveLength(2);
  });
});
