import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { linkFromRepo, makeConsumer, ROOT, run, runOk, STRICT_NODENEXT, typecheck } from '../helpers/consumer';
import { startRedis, type TestRedis } from '../helpers/redis-server';

// Packs the library as `npm publish` would and uses the tarball the way users will: from a CommonJS
// script, an ES module and a strict `nodenext` TypeScript project. Slow (a build and an npm install).
jest.setTimeout(300_000);

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  files: string[];
  bin?: Record<string, string>;
  scripts: Record<string, string>;
};

let redis: TestRedis;
let consumer: { dir: string; cleanup: () => Promise<void> };
let packed: { files: { path: string }[]; filename: string };
let startedAt: number;
let packDir: string;

beforeAll(async () => {
  redis = await startRedis();
  startedAt = Date.now();
  packDir = await mkdtemp(join(tmpdir(), 'ioredisson-pack-'));
  const out = await runOk('npm', ['pack', '--json', '--pack-destination', packDir], { timeout: 240_000 });
  // npm prints the lifecycle output of prepack before the JSON array.
  packed = (JSON.parse(out.slice(out.indexOf('\n[') + 1)) as (typeof packed)[])[0]!;
  consumer = await makeConsumer({ tarball: join(packDir, packed.filename) });
});

afterAll(async () => {
  await consumer?.cleanup();
  if (packDir) await rm(packDir, { recursive: true, force: true });
  await redis?.stop();
});

describe('npm pack', () => {
  it('builds dist/ on prepack', async () => {
    expect(pkg.scripts.prepack).toMatch(/build/);
    expect((await stat(join(ROOT, 'dist', 'index.js'))).mtimeMs).toBeGreaterThanOrEqual(startedAt - 1_000);
  });

  it('ships only what runs: dist, the README, the CHANGELOG, the LICENSE and package.json', () => {
    const paths = packed.files.map((f) => f.path).sort();
    for (const path of paths) expect(path).toMatch(/^(dist\/[^/]+|README\.md|CHANGELOG\.md|LICENSE|package\.json)$/);
    const entries = ['index', 'otel'].flatMap((entry) => ['js', 'mjs', 'd.ts', 'd.mts'].map((ext) => `dist/${entry}.${ext}`));
    for (const needed of ['LICENSE', 'README.md', 'CHANGELOG.md', ...entries]) {
      expect(paths).toContain(needed);
    }
    for (const bin of Object.values(pkg.bin ?? {})) expect(paths).toContain(bin.replace(/^\.\//, ''));
  });

  it('has the metadata a registry page shows', async () => {
    const meta = JSON.parse(await readFile(join(consumer.dir, 'node_modules', 'ioredisson', 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(meta.license).toBe('MIT');
    expect(meta.repository).toEqual(expect.objectContaining({ url: expect.stringContaining('github.com/ioredisson/ioredisson') }));
    expect(meta.homepage).toEqual(expect.stringContaining('https://'));
    expect(meta.bugs).toEqual(expect.objectContaining({ url: expect.stringContaining('https://') }));
    const license = await readFile(join(consumer.dir, 'node_modules', 'ioredisson', 'LICENSE'), 'utf8');
    expect(license).toMatch(/MIT License/);
    expect(license).toMatch(/2026 ioredisson contributors/);
  });

  it('has a README whose links work on the registry page (absolute, or anchors)', async () => {
    const readme = await readFile(join(consumer.dir, 'node_modules', 'ioredisson', 'README.md'), 'utf8');
    const targets = [...readme.matchAll(/\]\(([^)\s]+)/g)].map((m) => m[1]!);
    expect(targets.length).toBeGreaterThan(0);
    for (const target of targets) expect(target).toMatch(/^(https:\/\/|#)/);
  });
});

/** A program that takes and releases a lock with the installed package, then prints what it saw. */
const program = (imports: string): string => `${imports}
const redis = new Redis(process.env.REDIS_URL);
const redisson = new RedissonClient(redis);
const lock = redisson.getLock('packaging:lock');
const result = await lock.using(async () => (await lock.isLocked()) ? 'held' : 'free');
let notHeld = '';
try { await lock.unlock(); } catch (error) { notHeld = error instanceof LockNotHeldError ? error.code : String(error); }
await redisson.shutdown();
redis.disconnect();
console.log(JSON.stringify({ result, notHeld, left: typeof lock.isLocked }));
`;

describe('the packed tarball', () => {
  const expected = { result: 'held', notHeld: 'ERR_LOCK_NOT_HELD', left: 'function' };

  it('works from a CommonJS consumer', async () => {
    const source = program(`const { Redis } = require('ioredis');\nconst { RedissonClient, LockNotHeldError } = require('ioredisson');`);
    await writeFile(join(consumer.dir, 'consumer.cjs'), `(async () => {\n${source}\n})().catch((e) => { console.error(e); process.exit(1); });\n`);
    const out = await runOk(process.execPath, ['consumer.cjs'], { cwd: consumer.dir, env: { ...process.env, REDIS_URL: redis.url } });
    expect(JSON.parse(out)).toEqual(expected);
    // require() loads the CommonJS build.
    const resolved = await runOk(process.execPath, ['-p', "require.resolve('ioredisson')"], { cwd: consumer.dir });
    expect(resolved.trim()).toMatch(/dist[\\/]index\.js$/);
  });

  it('works from an ES module consumer', async () => {
    await writeFile(
      join(consumer.dir, 'consumer.mjs'),
      program(`import { Redis } from 'ioredis';\nimport { RedissonClient, LockNotHeldError } from 'ioredisson';`),
    );
    const out = await runOk(process.execPath, ['consumer.mjs'], { cwd: consumer.dir, env: { ...process.env, REDIS_URL: redis.url } });
    expect(JSON.parse(out)).toEqual(expected);
    const resolved = await runOk(process.execPath, ['--input-type=module', '-e', "console.log(import.meta.resolve('ioredisson'))"], { cwd: consumer.dir });
    expect(resolved.trim()).toMatch(/dist\/index\.mjs$/);
  });

  it('type-checks in a strict nodenext TypeScript consumer, as ESM and as CommonJS', async () => {
    const body = `import { Redis } from 'ioredis';
import { RedissonClient, LockNotHeldError, type Handle } from 'ioredisson';

export async function main(): Promise<number> {
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  const redisson = new RedissonClient(redis, { lockWatchdogTimeout: 30_000 });
  const lock = redisson.getLock('order:42');
  const handle: Handle | null = await lock.tryAcquire({ waitTime: 100 });
  const n: number = await lock.using(async (signal: AbortSignal) => (signal.aborted ? 0 : 1), { waitTime: 5_000 });
  await handle?.release();
  try { await lock.unlock(); } catch (error) { if (!(error instanceof LockNotHeldError)) throw error; }
  await redisson.shutdown();
  redis.disconnect();
  return n;
}
`;
    await writeFile(join(consumer.dir, 'consumer.mts'), body);
    await writeFile(join(consumer.dir, 'consumer.cts'), body);
    const result = await typecheck(consumer.dir, ['consumer.mts', 'consumer.cts']);
    expect(result.stdout + result.stderr).toBe('');
    expect(result.code).toBe(0);
  });

  it('installs the ioredisson command, which runs', async () => {
    const out = await runOk(join(consumer.dir, 'node_modules', '.bin', 'ioredisson'), ['--help'], { cwd: consumer.dir });
    expect(out).toMatch(/inspect <name>/);
    const inspected = await runOk(join(consumer.dir, 'node_modules', '.bin', 'ioredisson'), ['list', '--json', '--url', redis.url], { cwd: consumer.dir });
    expect(JSON.parse(inspected)).toEqual([]);
  });

  it('reports a type error in such a consumer (the check is real)', async () => {
    await writeFile(join(consumer.dir, 'broken.mts'), `import { RedissonClient } from 'ioredisson';\nconst n: string = new RedissonClient(null as never).id.length;\nexport { n };\n`);
    const result = await typecheck(consumer.dir, ['broken.mts'], { ...STRICT_NODENEXT, skipLibCheck: true });
    expect(result.code).not.toBe(0);
    expect(result.stdout).toMatch(/TS2322/);
  });
});

/** Takes a lock with `instrument` on, through the OpenTelemetry API's global (no-op) providers. */
const otelProgram = `const redis = new Redis(process.env.REDIS_URL);
const redisson = new RedissonClient(redis);
const uninstrument = instrument(redisson, { lockNameAttribute: true });
await redisson.getLock('packaging:otel').using(() => undefined);
uninstrument();
await redisson.shutdown();
redis.disconnect();
console.log(JSON.stringify({ instrument: typeof instrument, uninstrument: typeof uninstrument }));
`;

describe('ioredisson/otel from the packed tarball', () => {
  const env = (): NodeJS.ProcessEnv => ({ ...process.env, REDIS_URL: redis.url });
  const expected = { instrument: 'function', uninstrument: 'function' };

  beforeAll(async () => {
    // The optional peer is not installed with the package: the core entry above ran without it.
    const missing = await run(process.execPath, ['-e', "require('@opentelemetry/api')"], { cwd: consumer.dir });
    expect(missing.code).not.toBe(0);
    await linkFromRepo(consumer.dir, '@opentelemetry/api');
  });

  it('never loads @opentelemetry/api from the core entry, nor names it in its files', async () => {
    const loaded = await runOk(
      process.execPath,
      ['-e', "require('ioredisson'); console.log(JSON.stringify(Object.keys(require.cache).filter((f) => f.includes('opentelemetry'))))"],
      { cwd: consumer.dir },
    );
    expect(JSON.parse(loaded)).toEqual([]);
    const dist = join(consumer.dir, 'node_modules', 'ioredisson', 'dist');
    for (const file of ['index.js', 'index.mjs', 'index.d.ts', 'index.d.mts', 'cli.js']) {
      expect({ file, text: await readFile(join(dist, file), 'utf8') }).not.toMatchObject({ text: expect.stringContaining('opentelemetry') });
    }
  });

  it('works from a CommonJS consumer', async () => {
    const source = `const { Redis } = require('ioredis');\nconst { RedissonClient } = require('ioredisson');\nconst { instrument } = require('ioredisson/otel');\n${otelProgram}`;
    await writeFile(join(consumer.dir, 'otel.cjs'), `(async () => {\n${source}\n})().catch((e) => { console.error(e); process.exit(1); });\n`);
    expect(JSON.parse(await runOk(process.execPath, ['otel.cjs'], { cwd: consumer.dir, env: env() }))).toEqual(expected);
    const resolved = await runOk(process.execPath, ['-p', "require.resolve('ioredisson/otel')"], { cwd: consumer.dir });
    expect(resolved.trim()).toMatch(/dist[\\/]otel\.js$/);
  });

  it('works from an ES module consumer', async () => {
    const source = `import { Redis } from 'ioredis';\nimport { RedissonClient } from 'ioredisson';\nimport { instrument } from 'ioredisson/otel';\n${otelProgram}`;
    await writeFile(join(consumer.dir, 'otel.mjs'), source);
    expect(JSON.parse(await runOk(process.execPath, ['otel.mjs'], { cwd: consumer.dir, env: env() }))).toEqual(expected);
    const resolved = await runOk(process.execPath, ['--input-type=module', '-e', "console.log(import.meta.resolve('ioredisson/otel'))"], { cwd: consumer.dir });
    expect(resolved.trim()).toMatch(/dist\/otel\.mjs$/);
  });

  it('type-checks in a strict nodenext consumer, as ESM and as CommonJS: a RedissonClient is instrumentable', async () => {
    const body = `import { Redis } from 'ioredis';
import { metrics, trace } from '@opentelemetry/api';
import { RedissonClient } from 'ioredisson';
import { instrument, type InstrumentOptions, type Uninstrument } from 'ioredisson/otel';

export function main(): Uninstrument {
  const redisson = new RedissonClient(new Redis());
  const options: InstrumentOptions = { meterProvider: metrics.getMeterProvider(), tracerProvider: trace.getTracerProvider(), lockNameAttribute: false };
  return instrument(redisson, options);
}
`;
    await writeFile(join(consumer.dir, 'otel-consumer.mts'), body);
    await writeFile(join(consumer.dir, 'otel-consumer.cts'), body);
    const result = await typecheck(consumer.dir, ['otel-consumer.mts', 'otel-consumer.cts']);
    expect(result.stdout + result.stderr).toBe('');
    expect(result.code).toBe(0);
  });
});
