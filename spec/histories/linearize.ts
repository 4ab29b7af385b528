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
        for (const candidate of open.values()) {
          if (c.done.includes(candidate.id)) continue;
          if (candidate.after !== undefined && open.has(candidate.after) && !c.done.includes(candidate.after)) continue;
          for (const state of model.step(c.state, candidate)) {
            const done = candidate.cancels ? c.done.filter((id) => id !== candidate.after) : [...c.done, candidate.id].sort((a, b) => a - b);
            const grown = { state, done };
            const key = keyOf(grown);
            if (seen.has(key)) continue;
            seen.add(key);
            if (seen.size > SEARCH_LIMIT) throw new SearchLimitError(`more than ${SEARCH_LIMIT} configurations at op ${op.id}`);
            stack.push(grown);
          }
        }
      }
    } else {
      for (const c of configs.values()) {
        // Took effect within its window, or never did: either way it is settled now.
        const kept = { state: c.state, done: c.done.filter((id) => id !== op.id) };
        // A give-back cannot be settled as applied while its take was not; that config is dropped below.
        next.set(keyOf(kept), kept);
      }
      // Configurations where a dependent op already applied without this one are impossible anyway (see `after`).
    }
    if (next.size === 0) {
      return {
        op,
        before: [...configs.values()].map((c) => ({ state: c.state, applied: c.done })),
        open: [...open.values()],
      };
    }
    open.delete(op.id);
    configs = next;
  }
  return null;
}
