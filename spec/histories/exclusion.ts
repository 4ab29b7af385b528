import type { History, Op } from './history';

/**
 * One owner's uninterrupted hold of one lock (for the read/write lock: of one of its two modes),
 * from the completion of the acquisition that took it to the invocation of the release that gave
 * it up. A hold whose loss the owner was told of (its handle's signal, a release refused as not
 * held) is certain only until the first thing that can explain the loss: a force-unlock, a Redis
 * restart, a SIGSTOP or SIGKILL of its process; without any of these, until its lease before the
 * moment it learnt of the loss.
 */
export interface Episode {
  owner: string;
  mode: 'read' | 'write';
  start: number;
  end: number;
  lost: boolean;
  /** The acquisitions and releases of the hold. */
  ops: Op[];
}

/** Two holds that overlapped although the lock allows only one of them. */
export interface Overlap {
  a: Episode;
  b: Episode;
}

interface Open {
  count: number;
  episode: Episode;
  /** The latest moments the owner learnt of a loss. */
  learnt: number[];
}

/** The holds in the operations of one lock. */
export function episodes(history: History, ops: readonly Op[]): Episode[] {
  const byOwner = new Map<string, Op[]>();
  for (const op of ops) {
    const list = byOwner.get(op.owner) ?? [];
    list.push(op);
    byOwner.set(op.owner, list);
  }
  const forceUnlocks = ops.filter((op) => op.f === 'forceUnlock' && op.outcome !== 'fail');
  const restarts = history.faults.filter((f) => f.type === 'redis-restart');
  const result: Episode[] = [];
  for (const [owner, list] of byOwner) {
    const client = list[0]!.client;
    const leaseUs = (client === 'java' ? history.javaLeaseMs : history.nodeLeaseMs) * 1_000;
    const stops = history.faults.filter((f) => (f.type === 'stop' || f.type === 'kill') && f.client === client);
    const death = history.faults.find((f) => f.type === 'kill' && f.client === client)?.start;
    const open = new Map<string, Open>();
    const close = (mode: string, state: Open, at: number): void => {
      const { episode } = state;
      episode.end = at;
      // Moments within the hold where [start, end] may have ended it (from `from` for a lost hold).
      const from = episode.lost ? episode.ops[0]!.invoke : episode.start;
      const within = (f: { start: number; end: number }): number[] => (f.end >= from && f.start <= at ? [Math.max(episode.start, f.start)] : []);
      const interval = (op: Op) => ({ start: op.invoke, end: op.complete });
      // A restart or a force-unlock ends every hold it meets, told or not: a Java unlock of a fair,
      // read or write lock succeeds on a free lock, so a later successful release proves nothing.
      const explained = [...restarts.flatMap(within), ...forceUnlocks.map(interval).flatMap(within)];
      if (episode.lost) {
        explained.push(...stops.flatMap(within));
        if (explained.length === 0) explained.push(...state.learnt.map((t) => Math.max(episode.start, t - leaseUs)));
      }
      if (explained.length > 0) episode.end = Math.min(at, ...explained);
      result.push(episode);
      open.delete(mode);
    };
    for (const op of list.sort((a, b) => a.invoke - b.invoke)) {
      const mode = op.mode ?? 'write';
      if (op.f === 'acquire' && op.outcome === 'ok' && op.value !== false) {
        let state = open.get(mode);
        if (!state) {
          state = { count: 0, learnt: [], episode: { owner, mode, start: op.complete, end: Infinity, lost: false, ops: [] } };
          open.set(mode, state);
        }
        state.count += 1;
        state.episode.ops.push(op);
        if (op.lost !== undefined) {
          state.episode.lost = true;
          state.learnt.push(op.lost);
        }
      } else if (op.f === 'release') {
        const state = open.get(mode);
        if (!state) continue;
        state.episode.ops.push(op);
        // A release whose process died on the way: held until then, no loss to speak of.
        if (op.outcome === 'fail') {
          state.episode.lost = true;
          state.learnt.push(op.invoke);
        }
        state.count -= 1;
        if (state.count === 0) close(mode, state, op.invoke);
      }
    }
    // Still held when the process died, or when the run ended.
    for (const [mode, state] of [...open]) close(mode, state, death ?? Infinity);
  }
  return result;
}

/** Pairs of holds by different owners that overlap where the lock allows one (for read/write: unless both read). */
export function overlaps(all: readonly Episode[]): Overlap[] {
  const sorted = [...all].sort((a, b) => a.start - b.start);
  const found: Overlap[] = [];
  for (let i = 0; i < sorted.length; i++) {
    const a = sorted[i]!;
    for (let j = i + 1; j < sorted.length && sorted[j]!.start < a.end; j++) {
      const b = sorted[j]!;
      if (b.owner === a.owner || (a.mode === 'read' && b.mode === 'read')) continue;
      if (b.start < b.end && a.start < a.end) found.push({ a, b });
    }
  }
  return found;
}

/**
 * Fencing tokens that did not increase: an acquisition that completed before another began has the
 * smaller token, and no two are equal. Within one Redis lifetime (a restart starts the counter again);
 * acquisitions that span a restart are left out.
 */
export function tokenViolations(history: History, ops: readonly Op[]): [Op, Op][] {
  const restarts = history.faults.filter((f) => f.type === 'redis-restart');
  const epoch = (t: number): number => restarts.filter((r) => r.end <= t).length;
  const spansRestart = (op: Op): boolean => restarts.some((r) => r.start <= op.complete && r.end >= op.invoke);
  const tokens = ops.filter((op) => op.f === 'acquire' && op.outcome === 'ok' && typeof op.value === 'number' && !spansRestart(op));
  const epochs = new Map<number, Op[]>();
  for (const op of tokens) epochs.set(epoch(op.invoke), [...(epochs.get(epoch(op.invoke)) ?? []), op]);
  const found: [Op, Op][] = [];
  for (const list of epochs.values()) {
    // Sweep by invocation, with every acquisition completed before it behind the pointer.
    const byComplete = [...list].sort((a, b) => a.complete - b.complete);
    const seen = new Map<number, Op>();
    let greatest: Op | undefined;
    let i = 0;
    for (const b of [...list].sort((x, y) => x.invoke - y.invoke)) {
      while (i < byComplete.length && byComplete[i]!.complete < b.invoke) {
        const a = byComplete[i++]!;
        if (!greatest || (a.value as number) > (greatest.value as number)) greatest = a;
      }
      const twin = seen.get(b.value as number);
      if (greatest && (greatest.value as number) >= (b.value as number)) found.push([greatest, b]);
      else if (twin) found.push([twin, b]);
      seen.set(b.value as number, b);
    }
  }
  return found;
}
