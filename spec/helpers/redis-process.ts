import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** What `redis-server` logs once it serves clients. */
const READY_LINE = 'Ready to accept connections';

/**
 * The server binary every helper starts: `IOREDISSON_SERVER_BIN` when set (a path, e.g. a Redis 6.2
 * `redis-server` or a `valkey-server`), else `redis-server` from `PATH`.
 */
export function serverBinary(): string {
  return process.env.IOREDISSON_SERVER_BIN || 'redis-server';
}

/**
 * The command-line client that creates clusters: `IOREDISSON_CLI_BIN` when set, else the `*-cli` next
 * to `IOREDISSON_SERVER_BIN` (`valkey-cli` beside `valkey-server`) when there is one, else `redis-cli`.
 */
export function cliBinary(): string {
  if (process.env.IOREDISSON_CLI_BIN) return process.env.IOREDISSON_CLI_BIN;
  const server = process.env.IOREDISSON_SERVER_BIN;
  if (server) {
    const sibling = join(dirname(server), basename(server).replace(/server$/, 'cli'));
    if (sibling !== server && existsSync(sibling)) return sibling;
  }
  return 'redis-cli';
}

/** What {@link serverVersion} found. */
export interface ServerVersion {
  /** `redis` or `valkey`. */
  readonly name: string;
  readonly major: number;
  readonly minor: number;
  /** As printed, e.g. `6.2.14`. */
  readonly version: string;
}

let version: ServerVersion | undefined;

/** The server binary's product and version, from `<binary> --version` (read once per process). */
export function serverVersion(): ServerVersion {
  if (!version) {
    const text = execFileSync(serverBinary(), ['--version'], { encoding: 'utf8' });
    const found = /^(\w+) server v=(\d+)\.(\d+)\.\S*/i.exec(text.trim());
    if (!found) throw new Error(`cannot tell the version of ${serverBinary()} from: ${text}`);
    version = {
      name: found[1]!.toLowerCase(),
      major: Number(found[2]),
      minor: Number(found[3]),
      version: found[0].slice(found[0].indexOf('v=') + 2),
    };
  }
  return version;
}

/** Whether the server has 7.0's options (`--enable-debug-command`, `--cluster-port`): Redis 7+ and every Valkey. */
export function hasRedis7Options(): boolean {
  const { name, major } = serverVersion();
  return name !== 'redis' || major >= 7;
}

/** `--enable-debug-command local` where the option exists; Redis 6.2 allows DEBUG without it. */
export function debugCommandArgs(): string[] {
  return hasRedis7Options() ? ['--enable-debug-command', 'local'] : [];
}

/** Whether the server has `WAITAOF`: Redis 7.2+ and every Valkey. */
export function hasWaitAof(): boolean {
  const { name, major, minor } = serverVersion();
  return name !== 'redis' || major > 7 || (major === 7 && minor >= 2);
}

/** An append-only file (Redis 6.2) or folder (7.0+) named after `port`, for servers sharing a `--dir`. */
export function aofFileArgs(port: number): string[] {
  return hasRedis7Options() ? ['--appenddirname', `aof-${port}`] : ['--appendfilename', `aof-${port}.aof`];
}

/**
 * Every server started and not yet seen exit. Should a test run end without its clean-up (a failed
 * `beforeAll`, a crash, jest forcing its way out), they are killed by PID as the process exits.
 */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
});

/**
 * Starts the server binary ({@link serverBinary}) with `args` and resolves once it logs `readyLine`; rejects with its output
 * (having stopped it) when it exits, fails to start or overruns `timeoutMs` first.
 */
export async function spawnRedis(args: readonly string[], port: number, timeoutMs: number, readyLine = READY_LINE): Promise<ChildProcess> {
  const child = spawn(serverBinary(), args, { stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  child.once('exit', () => live.delete(child));
  try {
    await waitForLine(child, port, timeoutMs, readyLine);
    return child;
  } catch (error) {
    await stopProcess(child);
    throw error;
  }
}

/**
 * Stops a server with `signal` (SIGTERM by default, followed by SIGKILL if it lingers) and waits
 * for it to exit; SIGKILL drops it on the spot, as a crash would.
 */
export async function stopProcess(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  if (signal !== 'SIGKILL') child.kill('SIGCONT'); // a paused (SIGSTOP) server handles SIGTERM only once resumed
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

function waitForLine(child: ChildProcess, port: number, timeoutMs: number, line: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const done = (error?: Error): void => {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.stderr?.off('data', onData);
      child.off('exit', onExit);
      child.off('error', onError);
      // Keep draining the pipes so that a chatty server never blocks on a full pipe.
      child.stdout?.resume();
      child.stderr?.resume();
      if (error) reject(error);
      else resolve();
    };
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (output.includes(line)) done();
    };
    const onExit = (code: number | null, signal: string | null): void =>
      done(new Error(`redis-server on port ${port} exited (code ${code}, signal ${signal}) before it was ready:\n${output}`));
    const onError = (error: Error): void => done(new Error(`could not start redis-server on port ${port}: ${error.message}`));
    const timer = setTimeout(
      () => done(new Error(`redis-server on port ${port} not ready after ${timeoutMs} ms:\n${output}`)),
      timeoutMs,
    );
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', onExit);
    child.once('error', onError);
  });
}
