import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** The repository root (where package.json lives). */
export const ROOT = join(__dirname, '..', '..');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

/** Output of a finished child process. */
export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion (never rejects: the exit code is in the result). */
export function run(file: string, args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; timeout?: number } = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { cwd: options.cwd ?? ROOT, env: options.env ?? process.env, timeout: options.timeout ?? 180_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout: stdout.toString(), stderr: stderr.toString() });
      },
    );
  });
}

/** Runs a command and rejects with its output when it fails. */
export async function runOk(file: string, args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; timeout?: number } = {}): Promise<string> {
  const result = await run(file, args, options);
  if (result.code !== 0) throw new Error(`${file} ${args.join(' ')} exited ${result.code}\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/** Links `node_modules/<name>` of `dir` to the repository's copy (peer dependencies, @types/node). */
export async function linkFromRepo(dir: string, name: string): Promise<void> {
  const target = join(dir, 'node_modules', name);
  await mkdir(dirname(target), { recursive: true });
  if (!existsSync(target)) await symlink(join(ROOT, 'node_modules', name), target, 'dir');
}

/** The OpenTelemetry packages of the guide's snippets: the API (the optional peer) and the SDKs. */
const OTEL_PACKAGES = ['@opentelemetry/api', '@opentelemetry/sdk-metrics', '@opentelemetry/sdk-trace-base'];

/**
 * A scratch project that depends on ioredisson: either installed from a packed tarball (with npm,
 * offline from the local cache when it can) or linked to the repository (its built `dist/`). The
 * peer dependency ioredis and @types/node are links to the repository's node_modules; a linked one
 * also gets the OpenTelemetry API and SDK the guides' snippets use (a tarball's consumer has only the
 * required peer: the optional @opentelemetry/api is linked by the test that wants it).
 */
export async function makeConsumer(source: { tarball: string } | 'link'): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'ioredisson-consumer-'));
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }, null, 2));
  if (source === 'link') {
    await mkdir(join(dir, 'node_modules'), { recursive: true });
    await symlink(ROOT, join(dir, 'node_modules', 'ioredisson'), 'dir');
  } else {
    const common = ['install', '--no-audit', '--no-fund', '--legacy-peer-deps', '--ignore-scripts', '--no-package-lock'];
    const offline = await run('npm', [...common, '--offline', source.tarball], { cwd: dir });
    if (offline.code !== 0) await runOk('npm', [...common, '--prefer-offline', source.tarball], { cwd: dir });
  }
  await linkFromRepo(dir, 'ioredis');
  await linkFromRepo(dir, '@types/node');
  if (source === 'link') for (const name of OTEL_PACKAGES) await linkFromRepo(dir, name);
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Strict `nodenext` compiler options, as a careful TypeScript consumer would set them. */
export const STRICT_NODENEXT = {
  target: 'ES2022',
  module: 'nodenext',
  moduleResolution: 'nodenext',
  strict: true,
  noUncheckedIndexedAccess: true,
  exactOptionalPropertyTypes: true,
  noEmit: true,
  skipLibCheck: false,
  types: ['node'],
};

/** Type-checks `files` (paths relative to `dir`) with `compilerOptions`; resolves to tsc's output and exit code. */
export async function typecheck(dir: string, files: readonly string[], compilerOptions: Record<string, unknown> = STRICT_NODENEXT): Promise<RunResult> {
  await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files }, null, 2));
  return run(process.execPath, [TSC, '-p', join(dir, 'tsconfig.json')], { cwd: dir });
}
