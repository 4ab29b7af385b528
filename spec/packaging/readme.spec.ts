import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import ts from 'typescript';
import { makeConsumer, ROOT, run, runOk, typecheck } from '../helpers/consumer';
import { startRedis, type TestRedis } from '../helpers/redis-server';

// The ```ts snippets of the README and of every guide in docs/ are type-checked (strict, nodenext)
// against the built package and run against a throwaway Redis, so that they cannot drift from the
// library.
jest.setTimeout(300_000);

const DOCUMENTS = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((file) => file.endsWith('.md')).map((file) => `docs/${file}`)];
const snippets = DOCUMENTS.flatMap((document) => {
  const text = readFileSync(join(ROOT, document), 'utf8');
  return [...text.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => ({ document, code: m[1]!, line: text.slice(0, m.index).split('\n').length + 1 }));
}).map((snippet, i) => ({ ...snippet, name: `snippet-${i + 1}` }));

let redis: TestRedis;
let consumer: { dir: string; cleanup: () => Promise<void> };

beforeAll(async () => {
  if (!existsSync(join(ROOT, 'dist', 'index.d.mts'))) await runOk('npm', ['run', 'build']);
  redis = await startRedis();
  consumer = await makeConsumer('link');
  for (const s of snippets) await writeFile(join(consumer.dir, `${s.name}.mts`), s.code);
});

afterAll(async () => {
  await consumer?.cleanup();
  await redis?.stop();
});

describe('snippets of the README and the guides', () => {
  it('are there, and the Quick start runs on Node 20 as it is: no `await using`, the named Redis import', () => {
    expect(snippets.filter((s) => s.document === 'README.md').length).toBeGreaterThanOrEqual(2);
    expect(snippets.length).toBeGreaterThanOrEqual(10);
    const quickStart = snippets[0]!.code;
    expect(quickStart).not.toMatch(/^\s*await using /m);
    expect(quickStart).toMatch(/import \{ Redis \} from 'ioredis'/);
    expect(quickStart).toMatch(/new Redis\(process\.env\.REDIS_URL \?\? 'redis:\/\/127\.0\.0\.1:6379'\)/);
    for (const document of DOCUMENTS) expect({ document, text: readFileSync(join(ROOT, document), 'utf8') }).not.toMatchObject({ text: expect.stringMatching(/import Redis from 'ioredis'/) });
  });

  it('are all in the TypeDoc site, each guide with a title and a category for its menu', () => {
    const site = JSON.parse(readFileSync(join(ROOT, 'typedoc.json'), 'utf8')) as { projectDocuments: string[] };
    const guides = DOCUMENTS.filter((document) => document !== 'README.md');
    expect([...site.projectDocuments].sort()).toEqual([...guides].sort());
    for (const guide of guides) expect({ guide, text: readFileSync(join(ROOT, guide), 'utf8') }).toMatchObject({ text: expect.stringMatching(/^---\ntitle: .+\ncategory: .+\n---\n/) });
  });

  it('type-check under strict nodenext against the built package', async () => {
    const result = await typecheck(consumer.dir, snippets.map((s) => `${s.name}.mts`));
    // Report errors by document and line to make a drift easy to find.
    const report = (result.stdout + result.stderr).replace(/snippet-(\d+)\.mts\((\d+),/g, (_all, n: string, line: string) => {
      const snippet = snippets[Number(n) - 1]!;
      return `${snippet.document}(${snippet.line + Number(line) - 1},`;
    });
    expect(report).toBe('');
    expect(result.code).toBe(0);
  });

  it('run against Redis, each leaving no key behind', async () => {
    const env = { ...process.env, REDIS_URL: redis.url };
    const admin = redis.connect();
    try {
      for (const snippet of snippets) {
        await admin.flushall();
        // Plain JavaScript for Node: the snippets' types are stripped (and `await using` lowered).
        const js = ts.transpileModule(snippet.code, {
          compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
        }).outputText;
        const file = join(consumer.dir, `${snippet.name}.mjs`);
        await writeFile(file, js);
        const result = await run(process.execPath, [file], { cwd: consumer.dir, env, timeout: 60_000 });
        const at = `${snippet.document}:${snippet.line}`;
        expect({ at, code: result.code, stderr: result.stderr }).toEqual({ at, code: 0, stderr: '' });
        expect({ at, keys: await admin.keys('*') }).toEqual({ at, keys: [] });
      }
    } finally {
      admin.disconnect();
    }
  });

  it('the Quick start also runs untranspiled as an .mjs file', async () => {
    const file = join(consumer.dir, 'quick-start.mjs');
    await writeFile(file, snippets[0]!.code);
    const out = await runOk(process.execPath, [file], { cwd: consumer.dir, env: { ...process.env, REDIS_URL: redis.url }, timeout: 60_000 });
    expect(out).toMatch(/charged order 42/);
  });
});
