import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { useRedis } from './helpers/fixture';

const { admin, server } = useRedis();
const WORKER = join(__dirname, '..', 'examples', 'counter-worker.mjs');

describe('mutual exclusion across processes', () => {
  it('4 processes x 200 read-modify-write increments under lock() lose no update', async () => {
    const workers = [1, 2, 3, 4].map((n) =>
      spawn(process.execPath, [WORKER, server().url, '200', `p${n}`], { stdio: ['ignore', 'ignore', 'pipe'] }),
    );
    const stderr: string[] = [];
    for (const worker of workers) worker.stderr.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
    const codes = await Promise.all(workers.map(async (worker) => (await once(worker, 'exit'))[0] as number));
    expect(stderr.join('')).toBe('');
    expect(codes).toEqual([0, 0, 0, 0]);
    expect(await admin().get('demo:counter')).toBe('800');
    expect(await admin().exists('demo:counter-lock')).toBe(0);
    expect(await admin().keys('redisson_unlock_latch:*')).toEqual([]);
  });
});
