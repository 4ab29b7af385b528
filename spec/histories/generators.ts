import type { Args, Family, Rng } from './history';

/** An acquisition an actor holds: the id of the acquire that made it (its handle), and what it is. */
export interface Held {
  of: number;
  mode?: 'read' | 'write';
  permitId?: string;
}

/** What one sequential actor remembers between its operations. */
export interface ActorState {
  readonly family: Family;
  readonly java: boolean;
  held: Held[];
  /** Permits a Java admin drained and still owes back. */
  owed: number;
}

/** The next operation an actor runs; `pauseMs` first (think or hold time). */
export interface Planned {
  f: string;
  mode?: 'read' | 'write';
  args: Args;
  pauseMs: number;
}

/** Capacity the semaphores are created with: small, so that owners queue and cuts bite. */
export const CAPACITY = 2;

/**
 * The next operation of an actor, drawn from `rng`. The mixes make the interesting interleavings
 * likely: several owners per Node process contending for a capacity of 2, parked waiters with
 * random waits and aborts, Java changing capacity (`addPermits(±1)`, drain, delete, trySetPermits)
 * and force-unlocking, re-entry, latches set and counted down by both sides.
 */
export function plan(state: ActorState, rng: Rng): Planned {
  switch (state.family) {
    case 'semaphore':
    case 'expirableSemaphore':
      return state.java ? javaSemaphore(state, rng) : nodeSemaphore(state, rng);
    case 'latch':
      return latch(rng);
    default:
      return lock(state, rng);
  }
}

function acquireArgs(state: ActorState, rng: Rng): Args {
  const waitMs = rng.chance(0.2) ? 0 : rng.int(1, 800);
  const args: Args = { waitMs };
  // Java has no abort; a Node wait is aborted part-way now and then.
  if (!state.java && waitMs > 0 && rng.chance(0.1)) args.abortMs = rng.int(0, waitMs);
  return args;
}

function lock(state: ActorState, rng: Rng): Planned {
  const top = state.held.at(-1);
  if (rng.chance(0.02)) {
    const mode = state.family === 'rwLock' ? (top?.mode ?? 'write') : undefined;
    return { f: 'forceUnlock', mode, args: {}, pauseMs: rng.int(0, 50) };
  }
  if (top && rng.chance(0.7)) return { f: 'release', mode: top.mode, args: { of: top.of }, pauseMs: rng.int(0, 60) };
  // Re-entry keeps the mode held; a writer may also take the read lock (a downgrade).
  let mode: 'read' | 'write' | undefined;
  if (state.family === 'rwLock') mode = top?.mode === 'read' ? 'read' : rng.chance(0.5) ? 'read' : 'write';
  return { f: 'acquire', mode, args: acquireArgs(state, rng), pauseMs: top ? rng.int(0, 40) : rng.int(0, 20) };
}

function nodeSemaphore(state: ActorState, rng: Rng): Planned {
  const top = state.held.at(-1);
  if (rng.chance(0.04)) return { f: 'availablePermits', args: {}, pauseMs: rng.int(0, 30) };
  if (top && (state.held.length >= 2 || rng.chance(0.55))) return { f: 'release', args: { of: top.of, permitId: top.permitId }, pauseMs: rng.int(0, 80) };
  const args = acquireArgs(state, rng);
  if (state.family === 'expirableSemaphore' && rng.chance(0.5)) args.watchdog = true;
  return { f: 'acquire', args, pauseMs: rng.int(0, 20) };
}

/** The Java side of a semaphore: an owner that also changes the capacity under the Node owners. */
function javaSemaphore(state: ActorState, rng: Rng): Planned {
  const pauseMs = rng.int(0, 60);
  const top = state.held.at(-1);
  const roll = rng.next();
  if (state.owed > 0 && roll < 0.2) return { f: 'addPermits', args: { permits: state.owed, repays: true }, pauseMs };
  if (roll < 0.15) return { f: 'addPermits', args: { permits: -1 }, pauseMs };
  if (roll < 0.3) return { f: 'addPermits', args: { permits: 1 }, pauseMs };
  if (roll < 0.42) return { f: 'trySetPermits', args: { permits: CAPACITY }, pauseMs };
  if (roll < 0.5) return { f: 'availablePermits', args: {}, pauseMs };
  if (roll < 0.53 && state.family === 'semaphore') return { f: 'drainPermits', args: {}, pauseMs };
  if (roll < 0.56) return { f: 'delete', args: {}, pauseMs };
  if (top && rng.chance(0.6)) return { f: 'release', args: { of: top.of, permitId: top.permitId }, pauseMs };
  return { f: 'acquire', args: acquireArgs(state, rng), pauseMs };
}

function latch(rng: Rng): Planned {
  const pauseMs = rng.int(0, 40);
  const roll = rng.next();
  if (roll < 0.2) return { f: 'trySetCount', args: { count: rng.int(1, 3) }, pauseMs };
  if (roll < 0.5) return { f: 'countDown', args: {}, pauseMs };
  if (roll < 0.6) return { f: 'getCount', args: {}, pauseMs };
  if (roll < 0.63) return { f: 'delete', args: {}, pauseMs };
  return { f: 'await', args: { waitMs: rng.int(0, 800) }, pauseMs };
}
