import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/** Longest wait for the JVM's ready line: generous, a loaded 2-core machine starts Java slowly. */
export const READY_TIMEOUT = 60_000;
/** Longest wait for one reply unless the call says otherwise; longer than any wait a test asks for. */
const CALL_TIMEOUT = 45_000;

/** A command for the peer: `op`, plus `kind`, `name`, `thread` and the op's arguments. */
export type PeerRequest = { op: string; kind?: string; name?: string; thread?: number } & Record<string, unknown>;

/** A failure reported by the peer, e.g. `IllegalMonitorStateException: attempt to unlock lock, ...`. */
export class PeerError extends Error {
  constructor(
    readonly request: PeerRequest,
    readonly javaError: string,
  ) {
    super(`peer ${request.kind ?? 'peer'}.${request.op} failed: ${javaError}`);
  }
}

interface Pending {
  request: PeerRequest;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/** What the peer says when it is ready. */
interface ReadyLine {
  event: 'ready';
  clientId: string;
  redissonVersion: string;
  lockWatchdogTimeout: number;
}

/**
 * One JVM running the Redisson peer (spec/interop/redisson-peer): JSON lines in, JSON lines out,
 * replies matched to calls by id. Stopped by closing its stdin; killed if it lingers.
 */
export class JavaPeer {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private lastThread = 0;
  private stderr = '';
  private exited: Promise<void>;
  private readonly killOnExit = (): void => {
    this.child.kill('SIGKILL');
  };

  private constructor(
    private readonly child: ChildProcess,
    readonly ready: ReadyLine,
  ) {
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    process.once('exit', this.killOnExit);
  }

  /**
   * Starts the peer jar and resolves once it reports ready: against the server at `redis` (a URL), or
   * against a Redis Cluster when `redis` lists its node URLs (`config.useClusterServers()`).
   */
  static async start(jar: string, redis: string | readonly string[], lockWatchdogTimeout = 30_000): Promise<JavaPeer> {
    const target = typeof redis === 'string' ? ['--redis', redis] : ['--cluster', redis.join(',')];
    const child = spawn(
      'java',
      ['-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-jar', jar, ...target, '--lock-watchdog-timeout', String(lockWatchdogTimeout)],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let stderr = '';
    const onStderr = (chunk: Buffer): void => {
      stderr = (stderr + chunk.toString()).slice(-20_000);
      if (process.env.PEER_LOG) process.stderr.write(chunk);
    };
    child.stderr.on('data', onStderr);
    const lines = createInterface({ input: child.stdout });
    try {
      const ready = await waitForReady(child, lines, () => stderr);
      const peer = new JavaPeer(child, ready);
      peer.stderr = stderr;
      child.stderr.off('data', onStderr);
      child.stderr.on('data', (chunk: Buffer) => peer.onStderr(chunk));
      lines.on('line', (line) => peer.onLine(line));
      child.once('exit', (code, signal) => peer.failAll(new Error(`peer exited (code ${code}, signal ${signal}):\n${peer.stderr}`)));
      return peer;
    } catch (error) {
      child.kill('SIGKILL');
      throw error;
    }
  }

  /** The Redisson client id, the `<uuid>` of the peer's owner fields. */
  get clientId(): string {
    return this.ready.clientId;
  }

  /** A thread number no test has used: a fresh Java thread, so a test's leftovers never block another. */
  newThread(): number {
    this.lastThread += 1;
    return this.lastThread;
  }

  /** The Java thread id of a thread number: the `<tid>` of its owner field `<clientId>:<tid>`. */
  async threadId(thread: number): Promise<number> {
    return this.call<number>({ op: 'threadId', thread });
  }

  /** Sends one command and resolves its reply's value; rejects with {@link PeerError} on a Java failure. */
  call<T = unknown>(request: PeerRequest, timeoutMs = CALL_TIMEOUT): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      if (this.child.exitCode !== null || this.child.signalCode !== null) {
        reject(new Error(`peer is not running:\n${this.stderr}`));
        return;
      }
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`peer gave no reply to ${JSON.stringify(request)} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { request, resolve: resolve as (value: unknown) => void, reject, timer });
      this.child.stdin!.write(`${JSON.stringify({ ...request, id })}\n`);
    });
  }

  /** Closes stdin (the peer shuts Redisson down and exits); kills it by PID if it lingers. */
  async stop(): Promise<void> {
    process.off('exit', this.killOnExit);
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.stdin!.end();
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
      await this.exited;
      clearTimeout(timer);
    }
  }

  private onLine(line: string): void {
    let reply: { id?: number; ok?: boolean; value?: unknown; error?: string };
    try {
      reply = JSON.parse(line) as typeof reply;
    } catch {
      this.failAll(new Error(`peer wrote a line that is not JSON: ${line}`));
      return;
    }
    const pending = reply.id === undefined ? undefined : this.pending.get(reply.id);
    if (!pending) {
      this.failAll(new Error(`peer reply matches no call: ${line}`));
      return;
    }
    this.pending.delete(reply.id!);
    clearTimeout(pending.timer);
    if (reply.ok) pending.resolve(reply.value ?? null);
    else pending.reject(new PeerError(pending.request, reply.error ?? 'unknown error'));
  }

  private onStderr(chunk: Buffer): void {
    this.stderr = (this.stderr + chunk.toString()).slice(-20_000);
    if (process.env.PEER_LOG) process.stderr.write(chunk);
  }

  private failAll(error: Error): void {
    for (const { reject, timer } of this.pending.values()) {
      clearTimeout(timer);
      reject(error);
    }
    this.pending.clear();
  }
}

function waitForReady(child: ChildProcess, lines: ReturnType<typeof createInterface>, stderr: () => string): Promise<ReadyLine> {
  return new Promise((resolve, reject) => {
    const done = (error: Error | undefined, ready?: ReadyLine): void => {
      clearTimeout(timer);
      lines.off('line', onLine);
      child.off('exit', onExit);
      child.off('error', onError);
      if (error) reject(error);
      else resolve(ready!);
    };
    const onLine = (line: string): void => {
      try {
        const parsed = JSON.parse(line) as Partial<ReadyLine>;
        if (parsed.event === 'ready' && typeof parsed.clientId === 'string') done(undefined, parsed as ReadyLine);
        else done(new Error(`peer's first line is not its ready line: ${line}`));
      } catch {
        done(new Error(`peer wrote a line that is not JSON before it was ready: ${line}`));
      }
    };
    const onExit = (code: number | null, signal: string | null): void =>
      done(new Error(`peer exited (code ${code}, signal ${signal}) before it was ready:\n${stderr()}`));
    const onError = (error: Error): void => done(new Error(`could not start java: ${error.message}`));
    const timer = setTimeout(() => done(new Error(`peer not ready after ${READY_TIMEOUT} ms:\n${stderr()}`)), READY_TIMEOUT);
    lines.on('line', onLine);
    child.once('exit', onExit);
    child.once('error', onError);
  });
}
