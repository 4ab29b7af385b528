import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { PeerError, type JavaPeer } from '../interop/helpers/peer';
import { nowUs, type Op } from './history';

/** How long after its process died an operation in flight may still take effect (its command was on the wire). */
export const KILL_GRACE_US = 1_000_000;

/** A Node client's line: an operation's times and result, or a handle's lost lease. */
type WorkerLine =
  | { t: 'ready'; clientId: string; pid: number }
  | { t: 'op'; id: number; invoke: number; complete: number; ok: boolean; value?: unknown; error?: string }
  | { t: 'lost'; id: number; at: number };

/** Something that runs recorded operations: a Node client process or the Java peer. */
export interface Runner {
  /** Runs `op` (its fields filled in as the outcome comes) and resolves once it completed or can no longer. */
  perform(op: Op, thread: number): Promise<void>;
}

/** What an operation's acquire reply becomes in the history: `false` (not acquired), or true, a token, a permit id. */
function acquired(value: unknown): unknown {
  return value === null || value === undefined ? false : value;
}

/**
 * One Node client process (spec/histories/worker.mjs): a RedissonClient on its own ioredis
 * connection, named `h-<name>` in CLIENT LIST. Killed, it is started again as a new generation.
 */
export class NodeClient implements Runner {
  generation = 0;
  private child!: ChildProcessWithoutNullStreams;
  private readonly pending = new Map<number, { op: Op; done: () => void }>();
  private readonly all = new Map<number, Op>();
  private ready!: Promise<void>;
  private exited!: Promise<void>;
  private stopping = false;

  constructor(
    readonly index: number,
    private readonly url: string,
    private readonly leaseMs: number,
  ) {}

  /** `n<index>.<generation>`: the client in the history. */
  get label(): string {
    return `n${this.index}.${this.generation}`;
  }

  get connectionName(): string {
    return `h-n${this.index}`;
  }

  start(): Promise<void> {
    const worker = join(__dirname, 'worker.mjs');
    const child = spawn(process.execPath, [worker, this.url, this.connectionName, String(this.leaseMs)]);
    this.child = child;
    child.stdin.on('error', () => undefined); // written to as it was being killed: its ops end as unknown
    let onReady!: () => void;
    this.ready = new Promise((resolve) => (onReady = resolve));
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    child.stderr.on('data', (chunk: Buffer) => {
      if (process.env.HISTORY_LOG) process.stderr.write(chunk);
    });
    createInterface({ input: child.stdout }).on('line', (text) => {
      const line = JSON.parse(text) as WorkerLine;
      if (line.t === 'ready') onReady();
      else if (line.t === 'lost') {
        const op = this.all.get(line.id);
        if (op) op.lost = line.at;
      } else this.settle(line);
    });
    child.once('exit', () => {
      const diedAt = nowUs();
      for (const { op, done } of this.pending.values()) {
        op.outcome = 'unknown';
        op.complete = diedAt + KILL_GRACE_US;
        done();
      }
      this.pending.clear();
    });
    return this.ready;
  }

  async whenReady(): Promise<void> {
    await this.ready;
  }

  perform(op: Op, thread: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.child.exitCode !== null || this.child.signalCode !== null) {
        op.outcome = 'unknown';
        op.complete = op.invoke;
        resolve();
        return;
      }
      this.pending.set(op.id, { op, done: resolve });
      this.all.set(op.id, op);
      const kind = op.family === 'rwLock' ? `${op.mode}Lock` : op.family;
      const threadId = op.family === 'semaphore' || op.family === 'expirableSemaphore' || op.family === 'latch' ? undefined : thread;
      this.child.stdin.write(`${JSON.stringify({ id: op.id, kind, name: op.name, f: op.f, args: op.args, threadId })}\n`);
    });
  }

  signal(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  /** SIGKILL, then a new generation; resolves when it is ready. */
  async crashAndRestart(): Promise<void> {
    this.child.kill('SIGKILL');
    await this.exited;
    this.generation += 1;
    if (!this.stopping) await this.start();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGCONT');
    this.child.stdin.end('exit\n');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await this.exited;
    clearTimeout(timer);
  }

  private settle(line: Extract<WorkerLine, { t: 'op' }>): void {
    const entry = this.pending.get(line.id);
    if (!entry) return;
    this.pending.delete(line.id);
    const { op } = entry;
    op.invoke = line.invoke;
    op.complete = line.complete;
    op.outcome = line.ok ? 'ok' : 'fail';
    if (line.ok) op.value = op.f === 'acquire' ? acquired(line.value) : line.value;
    else op.error = line.error;
    entry.done();
  }
}

/** The Java Redisson peer as a runner: the runner's own send and receive times bound each operation. */
export class JavaClient implements Runner {
  constructor(private readonly peer: JavaPeer) {}

  newThread(): number {
    return this.peer.newThread();
  }

  async perform(op: Op, thread: number): Promise<void> {
    const request = javaRequest(op);
    const waitMs = typeof op.args.waitMs === 'number' ? op.args.waitMs : 0;
    op.invoke = nowUs();
    try {
      const value = await this.peer.call({ ...request, name: op.name, thread }, waitMs + 30_000);
      op.complete = nowUs();
      op.outcome = 'ok';
      op.value = op.f === 'acquire' ? acquired(value === false ? null : value) : value;
    } catch (error) {
      op.complete = nowUs();
      if (error instanceof PeerError) {
        op.outcome = 'fail';
        op.error = error.javaError;
      } else {
        op.outcome = 'unknown';
        op.error = (error as Error).message;
      }
    }
  }
}

/** The peer's request for an operation of the history. */
function javaRequest(op: Op): { op: string; kind: string } & Record<string, unknown> {
  const { family, args } = op;
  const kind = family === 'rwLock' ? `${op.mode}Lock` : family;
  const isLock = !['semaphore', 'expirableSemaphore', 'latch'].includes(family);
  switch (op.f) {
    case 'acquire':
      if (family === 'fencedLock') return { op: 'tryLockAndGetToken', kind, waitMs: args.waitMs, leaseMs: -1 };
      if (isLock) return { op: 'tryLock', kind, waitMs: args.waitMs, leaseMs: -1 };
      if (family === 'expirableSemaphore') return { op: 'tryAcquire', kind, waitMs: args.waitMs, leaseMs: -1 };
      return { op: 'tryAcquire', kind, permits: 1, waitMs: args.waitMs };
    case 'release':
      if (isLock) return { op: 'unlock', kind };
      if (family === 'expirableSemaphore') return { op: 'release', kind, permitId: args.permitId };
      return { op: 'release', kind, permits: 1 };
    default:
      return { op: op.f, kind, ...args };
  }
}
