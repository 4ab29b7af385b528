import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startRedis, type TestRedis } from '../helpers/redis-server';

// The bench's floors (bench/adapters/floor-*.mjs: each kind's scripts on bare ioredis) bound the
// library's figures only if they are correct: no lost update, no lost wake-up, nothing left
// subscribed. The checks run in a child (the adapters are ES modules) against a real Redis.
const FIXTURE = join(__dirname, '..', 'fixtures', 'floor-check.mjs');
const run = promisify(execFile);

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis.stop();
});

/** Runs one check of the fixture; resolves its findings. */
async function check(name: string): Promise<Record<string, number | boolean>> {
  const { stdout } = await run(process.execPath, [FIXTURE, name, redis.url], { timeout: 50_000 });
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, number | boolean>;
}

const clean = { serverChannels: 0, clientChannels: 0 };

describe('bench floors', () => {
  it.each(['rlock', 'fair-lock', 'redlock'])(
    '%s: workers on several clients lose no update and all get served',
    async (name) => {
      const found = await check(name);
      expect(found.counter).toBe(found.expected);
      expect(found).toMatchObject(clean);
    },
  );

  it('read/write lock: writers lose no update, no reader sees a write while it holds', async () => {
    const found = await check('read-write');
    expect(found.counter).toBe(found.expected);
    expect(found.expected).toBe(75);
    expect(found).toMatchObject({ reads: 225, torn: 0, ...clean });
  });

  it.each(['semaphore', 'expirable-semaphore'])(
    '%s: never more than 3 holders of 3 permits, every worker served',
    async (name) => {
      const found = await check(name);
      expect(found).toMatchObject({ served: 300, ...clean });
      expect(found.peak).toBeLessThanOrEqual(3);
    },
  );

  it('latch: every waiter of two clients is released at zero', async () => {
    expect(await check('latch')).toEqual({ released: 40, ...clean });
  });

  it("a release landing between a waiter's attempt and its park wakes it (no TTL to fall back on)", async () => {
    expect(await check('release-during-attempt')).toEqual({ served: true, ...clean });
  });

  it('a channel stays subscribed for a waiter between its subscribe and its park while the other waiter leaves', async () => {
    expect(await check('unsubscribe-under-waiter')).toEqual({ served: true, ...clean });
  });
});
