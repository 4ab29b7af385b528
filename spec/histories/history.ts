/** The object families the checker exercises; each has one object per run, named `h:<family>`. */
export const FAMILIES = ['lock', 'fairLock', 'fencedLock', 'rwLock', 'semaphore', 'expirableSemaphore', 'latch'] as const;
export type Family = (typeof FAMILIES)[number];

/** What an operation's caller learnt: a reply, an error, or nothing (its process died, its reply never came). */
export type Outcome = 'ok' | 'fail' | 'unknown';

/** Arguments of an operation: small numbers, flags and permit ids only. */
export type Args = Record<string, number | boolean | string | undefined>;

/**
 * One operation as the history records it. Times are microseconds of the machine's monotonic clock
 * (CLOCK_MONOTONIC, the same in every process): a Node client's own times for its operations, the
 * runner's send and receive times for the Java peer's (wider, so never tighter than the truth).
 */
export interface Op {
  id: number;
  family: Family;
  /** The Redis object, `h:<family>`. */
  name: string;
  /** `n<i>.<generation>` for a Node process (a restarted process is a new generation), `java` for the peer. */
  client: string;
  /** `<client>/<owner>`: one sequential actor (a Node owner's threadId, a Java thread). */
  owner: string;
  f: string;
  /** For the read/write lock: which lock. */
  mode?: 'read' | 'write';
  args: Args;
  invoke: number;
  /** When the reply came; for an `unknown` outcome, the latest moment its effect can have happened. */
  complete: number;
  outcome: Outcome;
  value?: unknown;
  error?: string;
  /** When the handle this acquisition made reported its lease lost (its signal's `LockLostError`). */
  lost?: number;
}

/** A fault the runner injected, over [start, end] µs. */
export interface Fault {
  type: 'connection-kill' | 'stop' | 'kill' | 'redis-restart';
  /** The Node client (or `java`) it hit; none for a Redis restart. */
  client?: string;
  start: number;
  end: number;
}

/** Everything one run recorded. */
export interface History {
  seed: number;
  opsPerKind: number;
  ops: Op[];
  faults: Fault[];
  /** Lease of the Node clients' watchdog and of the Java peer's, in ms. */
  nodeLeaseMs: number;
  javaLeaseMs: number;
}

/** The machine's monotonic clock in µs. */
export function nowUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/** A small seeded generator (mulberry32): the same seed gives the same choices. */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** A generator of its own for `stream`, independent of how far this one has run. */
  fork(stream: number): Rng {
    return new Rng(Math.imul(this.state ^ 0x9e3779b9, 2654435761) ^ Math.imul(stream + 1, 0x85ebca6b));
  }
}
