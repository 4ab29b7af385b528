import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import ts from 'typescript';
import { makeConsumer, ROOT, run, runOk, STRICT_NODENEXT, typecheck } from '../helpers/consumer';
import { startRedis, type TestRedis } from '../helpers/redis-server';

// Every file in examples/ type-checks as a consumer's code (strict nodenext against the built
// package; the .mjs ones with checkJs), and the runnable ones complete against a throwaway Redis.
jest.setTimeout(300_000);

const EXAMPLES = join(ROOT, 'examples');
const files = readdirSync(EXAMPLES).filter((f) => /\.(mjs|ts)$/.test(f)).sort();

/** What each runnable example must print, and the keys it may leave on purpose. */
const runs: { file: string; prints: RegExp; leaves?: string[] }[] = [
  { file: 'job-once.mjs', prints: /the job ran 1 time\(s\) across 5 instances/ },
  { file: 'http-owner-scope.mjs', prints: /requests in the critical section at once: at most 1\n/ },
  { file: 'read-write-cache.mjs', prints: /torn reads \(a version with another version's body\): 0/ },
  { file: 'lost-lock.mjs', prints: /release\(\) rejected with LockNotHeldError \(ERR_LOCK_NOT_HELD\)/ },
  { file: 'fencing-token.mjs', prints: /write "A: step 2" with token 1: REFUSED \(stale token\)/ },
  // The slots are meant to outlive a run: every process running the script shares them.
  { file: 'semaphore-api-limit.mjs', prints: /slots free now: 3/, leaves: ['example:api-slots'] },
  { file: 'latch-workers.mjs', prints: /all workers finished/ },
  { file: 'typed-usage.ts', prints: /second caller: busy, try again later \(timeout: true\)/ },
];
// demo.mjs (and counter-worker.mjs, which it starts) run in demo.spec.ts.

let redis: TestRedis;
let consumer: { dir: string; cleanup: () => Promise<void> };

beforeAll(async () => {
  if (!existsSync(join(ROOT, 'dist', 'index.d.mts'))) await runOk('npm', ['run', 'build']);
  redis = await startRedis();
  consumer = await makeConsumer('link');
  await mkdir(join(consumer.dir, 'examples'));
  // An ES module project, as typed-usage.ts expects (top-level await); the .mjs files are ESM anyway.
  await writeFile(join(consumer.dir, 'examples', 'package.json'), JSON.stringify({ type: 'module' }));
  for (const file of files) await copyFile(join(EXAMPLES, file), join(consumer.dir, 'examples', file));
});

afterAll(async () => {
  await consumer?.cleanup();
  await redis?.stop();
});

it('examples/ holds what the README lists, each file with a line there', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  for (const file of files) expect(readme).toContain(`examples/${file}`);
  for (const { file } of runs) expect(files).toContain(file);
});

it('every example type-checks under strict nodenext against the built package (JavaScript with checkJs)', async () => {
  const result = await typecheck(
    consumer.dir,
    files.map((f) => `examples/${f}`),
    { ...STRICT_NODENEXT, allowJs: true, checkJs: true, lib: ['ES2023', 'DOM'] },
  );
  expect(result.stdout + result.stderr).toBe('');
  expect(result.code).toBe(0);
});

describe('each runnable example completes against Redis', () => {
  for (const example of runs) {
    it(example.file, async () => {
      const admin = redis.connect();
      try {
        await admin.flushall();
        let file = join(EXAMPLES, example.file);
        if (file.endsWith('.ts')) {
          // Node 20 runs no TypeScript: strip the types, as tsc would emit it.
          const js = ts.transpileModule(readFileSync(file, 'utf8'), {
            compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
          }).outputText;
          file = join(consumer.dir, 'examples', example.file.replace(/\.ts$/, '.mjs'));
          await writeFile(file, js);
        }
        // Run from the repository, as `node examples/<file>` would be: 'ioredisson' is the built package.
        const result = await run(process.execPath, [file], {
          env: { ...process.env, REDIS_URL: redis.url },
          timeout: 60_000,
        });
        expect({ file: example.file, code: result.code, stderr: result.stderr }).toEqual({ file: example.file, code: 0, stderr: '' });
        expect(result.stdout).toMatch(example.prints);
        expect((await admin.keys('*')).sort()).toEqual(example.leaves ?? []);
      } finally {
        admin.disconnect();
      }
    });
  }
});
