import { spawn, type ChildProcess } from 'node:child_process';

/** What `redis-server` logs once it serves clients. */
const READY_LINE = 'Ready to accept connections';

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
 * Starts `redis-server` with `args` and resolves once it logs `readyLine`; rejects with its output
 * (having stopped it) when it exits, fails to start or overruns `timeoutMs` first.
 */
export async function spawnRedis(args: readonly string[], port: number, timeoutMs: number, readyLine = READY_LINE): Promise<ChildProcess> {
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
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
