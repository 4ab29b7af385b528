import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { startContainer } from './container';
import { serverSource } from './server-source';

/** What `redis-server` logs once it serves clients. */
const READY_LINE = 'Ready to accept connections';

/** A server a helper started: a local process, or a container (see {@link serverSource}). */
export interface ServerProcess {
  /** The PID, or the container's id. */
  readonly id: number | string;
  /** Whether it has exited. */
  readonly exited: boolean;
  /** Settles once it has exited. */
  readonly exit: Promise<void>;
  /** Sends `signal` to the server (SIGSTOP freezes it, SIGCONT thaws it, SIGKILL is a crash). */
  kill(signal: NodeJS.Signals): void;
  /** A container's: runs `command` inside it (e.g. `redis-cli`) and resolves with its output. */
  run?(command: readonly string[]): Promise<string>;
}

/**
 * Every server started and not yet seen exit. Should a test run end without its clean-up (a failed
 * `beforeAll`, a crash, jest forcing its way out), they are killed as the process exits: a process
 * by PID, a container with the `docker` command.
 */
const live = new Set<ServerProcess>();
process.once('exit', () => {
  for (const server of live) {
    try {
      if (typeof server.id === 'number') server.kill('SIGKILL');
      else execFileSync('docker', ['rm', '--force', server.id], { stdio: 'ignore' });
    } catch {
      // already gone
    }
  }
});

/**
 * Starts the server ({@link serverSource}: a local binary, else a container) with `args` and resolves
 * once it logs `readyLine`; rejects with its output (having stopped it) when it exits, fails to
 * start or overruns `timeoutMs` first.
 */
export async function spawnRedis(args: readonly string[], port: number, timeoutMs: number, readyLine = READY_LINE): Promise<ServerProcess> {
  const source = serverSource();
  const server =
    source.kind === 'container' ? await startContainer(source.image, args, timeoutMs, readyLine) : await spawnLocal(source.path, args, port, timeoutMs, readyLine);
  live.add(server);
  void server.exit.then(() => live.delete(server));
  return server;
}

async function spawnLocal(binary: string, args: readonly string[], port: number, timeoutMs: number, readyLine: string): Promise<ServerProcess> {
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const exit = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const server: ServerProcess = {
    id: child.pid ?? 0,
    get exited() {
      return child.exitCode !== null || child.signalCode !== null;
    },
    exit,
    kill: (signal) => void child.kill(signal),
  };
  try {
    await waitForLine(child, port, timeoutMs, readyLine);
    return server;
  } catch (error) {
    await stopProcess(server);
    throw error;
  }
}

/**
 * Stops a server with `signal` (SIGTERM by default, followed by SIGKILL if it lingers) and waits
 * for it to exit; SIGKILL drops it on the spot, as a crash would.
 */
export async function stopProcess(server: ServerProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (server.exited) return;
  server.kill(signal);
  if (signal !== 'SIGKILL') server.kill('SIGCONT'); // a paused (SIGSTOP) server handles SIGTERM only once resumed
  const timer = setTimeout(() => server.kill('SIGKILL'), 5_000);
  await server.exit;
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
