/**
 * A linearizability check in the Wing-Gong-Lowe style, done "just in time": events are read in time
 * order, and the search keeps every configuration the history so far allows (a model state plus
 * which of the operations still open have already taken effect), memoized by their key. An operation
 * that completed must have taken effect by its completion; one whose outcome is unknown may take
 * effect once, at any point of its window, or never.
 */

/** An operation as the search sees it. */
export interface LinOp {
  id: number;
  invoke: number;
  /** Completion (`must`), or the end of the window in which it may have taken effect. */
  end: number;
  must: boolean;
  /** Only after this operation took effect (an aborted acquisition's give-back after its take). */
  after?: number;
  /**
   * Applied after `after`, it undoes it exactly (a give-back after its take): the pair is then as if
   * neither had happened, and the search keeps it that way (both open again), which covers the same
   * futures with one configuration fewer per pair.
   */
  cancels?: boolean;
}

/** A sequential specification. */
export interface Model<S, O extends LinOp> {
  init: S;
  key(state: S): string;
  /** The states `op` can lead to from `state` given what it returned; none if it cannot take effect there. */
  step(state: S, op: O): S[];
  /**
   * Changes no client asked for that can happen at any moment (an expired permit reclaimed); each
   * must lower some measure of the state, so that they cannot go on forever.
   */
  internal?(state: S): S[];
}

interface Config<S> {
  state: S;
  /** Open operations that have taken effect. */
  done: number[];
}

/** Where the search found no linearization. */
export interface LinFailure<S, O extends LinOp> {
  /** The operation that could not take effect in time (or whose window had no consistent place). */
  op: O;
  /** States the history allowed just before, with the open operations already applied in each. */
  before: { state: S; applied: number[] }[];
  /** Operations open at that moment. */
  open: O[];
}

/** Most configurations explored at one event before the check gives up (reported, never a pass). */
const SEARCH_LIMIT = 500_000;

export class SearchLimitError extends Error {}

/** Resolves null when `ops` are linearizable against `model`, else the first failure. */
export function checkLinearizable<S, O extends LinOp>(model: Model<S, O>, ops: readonly O[]): LinFailure<S, O> | null {
  type Event = { at: number; close: boolean; op: O };
  const events: Event[] = [];
  for (const op of ops) {
    events.push({ at: op.invoke, close: false, op }, { at: op.end, close: true, op });
  }
  // Invocations before completions at the same instant (concurrent, not ordered); later ids close first.
  events.sort((a, b) => a.at - b.at || Number(a.close) - Number(b.close) || (a.close ? b.op.id - a.op.id : a.op.id - b.op.id));
  const keyOf = (c: Config<S>): string => `${model.key(c.state)}|${c.done.join(',')}`;
  let configs = new Map<string, Config<S>>([[keyOf({ state: model.init, done: [] }), { state: model.init, done: [] }]]);
  const open = new Map<number, O>();
  const apply = (c: Config<S>, op: O): Config<S>[] =>
    model.step(c.state, op).map((state) => ({
      state,
      done: op.cancels ? c.done.filter((id) => id !== op.after) : [...c.done, op.id].sort((a, b) => a - b),
    }));
  const internalMoves = (c: Config<S>): Config<S>[] => (model.internal?.(c.state) ?? []).map((state) => ({ state, done: c.done }));
  const applicable = (c: Config<S>, op: O): boolean =>
    !c.done.includes(op.id) && (op.after === undefined || !open.has(op.after) || c.done.includes(op.after));

  for (const { close, op } of events) {
    if (!close) {
      open.set(op.id, op);
      continue;
    }
    const next = new Map<string, Config<S>>();
    if (op.must) {
      const seen = new Set<string>();
      const stack = [...configs.values()];
      while (stack.length > 0) {
        const c = stack.pop()!;
        if (c.done.includes(op.id)) {
          const kept = { state: c.state, done: c.done.filter((id) => id !== op.id) };
          next.set(keyOf(kept), kept);
          continue;
        }
        const moves = [...open.values()].filter((candidate) => applicable(c, candidate)).flatMap((candidate) => apply(c, candidate));
        for (const grown of [...moves, ...internalMoves(c)]) {
          const key = keyOf(grown);
          if (seen.has(key)) continue;
          seen.add(key);
          if (seen.size > SEARCH_LIMIT) throw new SearchLimitError(`more than ${SEARCH_LIMIT} configurations at op ${op.id}`);
          stack.push(grown);
        }
      }
    } else {
      // Took effect within its window, or never did: either way it is settled now.
      for (const c of configs.values()) {
        const kept = { state: c.state, done: c.done.filter((id) => id !== op.id) };
        next.set(keyOf(kept), kept);
      }
    }
    if (next.size === 0) {
      return {
        op,
        before: [...configs.values()].map((c) => ({ state: c.state, applied: c.done })),
        open: [...open.values()],
      };
    }
    open.delete(op.id);
    configs = withoutReachable(next, open, apply, applicable, internalMoves, keyOf);
  }
  return null;
}

/**
 * Drops every configuration that another one reaches by applying one more still-open operation:
 * whatever the dropped one can still do, the other can too (it may apply that operation next).
 * Transitive, so only the configurations that applied nothing they did not need are kept.
 */
function withoutReachable<S, O extends LinOp>(
  configs: Map<string, Config<S>>,
  open: Map<number, O>,
  apply: (c: Config<S>, op: O) => Config<S>[],
  applicable: (c: Config<S>, op: O) => boolean,
  internalMoves: (c: Config<S>) => Config<S>[],
  keyOf: (c: Config<S>) => string,
): Map<string, Config<S>> {
  if (configs.size < 2) return configs;
  const reached = new Set<string>();
  for (const c of configs.values()) {
    for (const op of open.values()) {
      if (!applicable(c, op)) continue;
      for (const grown of apply(c, op)) {
        // Only towards more applied operations, so that no two configurations drop each other.
        if (grown.done.length > c.done.length) reached.add(keyOf(grown));
      }
    }
    // Internal changes lower their measure: no cycle either.
    for (const grown of internalMoves(c)) reached.add(keyOf(grown));
  }
  for (const key of reached) configs.delete(key);
  return configs;
}
