import type { LinOp, Model } from './linearize';

/**
 * The sequential specifications of the counting objects, as Redisson's scripts define them (and
 * ioredisson's, which must match): what each operation does to the state, given what it returned.
 * `value` undefined means the caller never learnt the result (any result is allowed).
 */
export interface SpecOp extends LinOp {
  f: 'take' | 'give' | 'add' | 'trySet' | 'drain' | 'delete' | 'read' | 'wipe' | 'doom' | 'countDown' | 'await';
  /** Permits or count or delta. */
  n: number;
  /** A permit id (expirable semaphore). */
  permit?: string;
  value?: unknown;
}

const known = (op: SpecOp): boolean => op.value !== undefined;

/** RSemaphore: the count, or null when the key does not exist. */
export const SEMAPHORE: Model<number | null, SpecOp> = {
  init: null,
  key: (s) => String(s),
  step(s, op) {
    switch (op.f) {
      case 'take':
        return s !== null && s >= op.n ? [s - op.n] : [];
      case 'give':
      case 'add':
        return [(s ?? 0) + op.n];
      case 'trySet':
        if (!known(op)) return [s === null ? op.n : s];
        return op.value ? (s === null ? [op.n] : []) : s === null ? [] : [s];
      case 'drain':
        if (s === null) return !known(op) || op.value === 0 ? [null] : [];
        return !known(op) || op.value === s ? [0] : [];
      case 'delete':
        return !known(op) || op.value === (s !== null) ? [null] : [];
      case 'read':
        return op.value === (s ?? 0) ? [s] : [];
      case 'wipe':
        return [null];
      default:
        return [];
    }
  },
};

/**
 * RPermitExpirableSemaphore: the available count (null: no key), the ids of the acquired permits,
 * and how many acquired permits are doomed: their holder lost them (stopped past its lease, killed),
 * so they expire and are reclaimed at some moment nobody observes (an internal change).
 */
export interface Expirable {
  available: number | null;
  held: readonly string[];
  doomed: number;
}

const without = (held: readonly string[], id: string): string[] => held.filter((h) => h !== id);

export const EXPIRABLE: Model<Expirable, SpecOp> = {
  init: { available: null, held: [], doomed: 0 },
  key: (s) => `${s.available}:${s.held.join(',')}:${s.doomed}`,
  internal: (s) => (s.doomed > 0 ? [{ ...s, available: (s.available ?? 0) + 1, doomed: s.doomed - 1 }] : []),
  step(s, op) {
    const has = op.permit !== undefined && s.held.includes(op.permit);
    const giveBack = (): Expirable => ({ ...s, available: (s.available ?? 0) + 1, held: without(s.held, op.permit!) });
    switch (op.f) {
      case 'take':
        return (s.available ?? 0) >= 1 ? [{ ...s, available: (s.available ?? 0) - 1, held: [...s.held, op.permit!].sort() }] : [];
      case 'give':
        // Released (value true); refused (false: not held, or held but expired, which still gives it back); unknown.
        if (op.value === true) return has ? [giveBack()] : [];
        if (op.value === false) return has ? [giveBack(), s] : [s];
        return has ? [giveBack(), s] : [s];
      case 'doom':
        return has ? [{ ...s, held: without(s.held, op.permit!), doomed: s.doomed + 1 }] : [s];
      case 'add':
        return [{ ...s, available: (s.available ?? 0) + op.n }];
      case 'trySet':
        if (!known(op)) return [s.available === null ? { ...s, available: op.n } : s];
        return op.value ? (s.available === null ? [{ ...s, available: op.n }] : []) : s.available === null ? [] : [s];
      case 'delete': {
        const existed = s.available !== null || s.held.length > 0 || s.doomed > 0;
        return !known(op) || op.value === existed ? [EXPIRABLE.init] : [];
      }
      case 'read':
        return op.value === (s.available ?? 0) ? [s] : [];
      case 'wipe':
        return [EXPIRABLE.init];
      default:
        return [];
    }
  },
};

/** RCountDownLatch: the count, 0 when open (no key). */
export const LATCH: Model<number, SpecOp> = {
  init: 0,
  key: (s) => String(s),
  step(s, op) {
    switch (op.f) {
      case 'trySet':
        if (!known(op)) return [s === 0 ? op.n : s];
        return op.value ? (s === 0 ? [op.n] : []) : s > 0 ? [s] : [];
      case 'countDown':
        return [Math.max(0, s - 1)];
      case 'read':
        return op.value === s ? [s] : [];
      case 'await':
        return s === 0 ? [s] : [];
      case 'delete':
        return !known(op) || op.value === (s > 0) ? [0] : [];
      case 'wipe':
        return [0];
      default:
        return [];
    }
  },
};
