import { episodes, overlaps, tokenViolations } from './exclusion';
import { FAMILIES, type Family, type History, type Op } from './history';
import { checkLinearizable, SearchLimitError, type LinFailure, type Model } from './linearize';
import { EXPIRABLE, LATCH, SEMAPHORE, type SpecOp } from './models';
import { specOps } from './spec-ops';

/** One thing the history shows that the object's model forbids, with the few operations that show it. */
export interface Violation {
  family: Family;
  rule: 'mutual exclusion' | 'readers/writer exclusion' | 'fencing tokens' | 'linearizability' | 'search limit';
  message: string;
  /** The operations involved, in the order they were invoked. */
  ops: Op[];
}

/** What a check found, and how much history it read. */
export interface Verdict {
  violations: Violation[];
  /** Operations per family: all, and those that completed with a reply. */
  counts: Record<string, { ops: number; ok: number }>;
  faults: Record<string, number>;
}

const MODELS: Partial<Record<Family, Model<unknown, SpecOp>>> = {
  semaphore: SEMAPHORE,
  expirableSemaphore: EXPIRABLE,
  latch: LATCH,
};

/** Checks every object of the history against its model. */
export function checkHistory(history: History): Verdict {
  const violations: Violation[] = [];
  const counts: Verdict['counts'] = {};
  for (const family of FAMILIES) {
    const ops = history.ops.filter((op) => op.family === family);
    if (ops.length === 0) continue;
    counts[family] = { ops: ops.length, ok: ops.filter((op) => op.outcome === 'ok').length };
    violations.push(...checkFamily(history, family, ops));
  }
  const faults: Record<string, number> = {};
  for (const fault of history.faults) faults[fault.type] = (faults[fault.type] ?? 0) + 1;
  return { violations, counts, faults };
}

function checkFamily(history: History, family: Family, ops: Op[]): Violation[] {
  const model = MODELS[family];
  if (model) {
    const spec = specOps(history, ops);
    try {
      const failure = checkLinearizable(model, spec);
      return failure ? [linearizabilityViolation(family, failure, ops)] : [];
    } catch (error) {
      if (!(error instanceof SearchLimitError)) throw error;
      return [{ family, rule: 'search limit', message: error.message, ops: [] }];
    }
  }
  const found: Violation[] = [];
  const rule = family === 'rwLock' ? 'readers/writer exclusion' : 'mutual exclusion';
  for (const { a, b } of overlaps(episodes(history, ops))) {
    const message = `${a.owner} held the ${a.mode} lock over [${ms(history, a.start)}, ${ms(history, a.end)}]${a.lost ? ' (lost)' : ''} while ${b.owner} held the ${b.mode} lock over [${ms(history, b.start)}, ${ms(history, b.end)}]${b.lost ? ' (lost)' : ''}`;
    found.push({ family, rule, message, ops: sortOps([...a.ops, ...b.ops]) });
  }
  if (family === 'fencedLock') {
    for (const [a, b] of tokenViolations(history, ops)) {
      found.push({ family, rule: 'fencing tokens', message: `token ${String(a.value)} (op ${a.id}) then ${String(b.value)} (op ${b.id})`, ops: [a, b] });
    }
  }
  return found;
}

function linearizabilityViolation(family: Family, failure: LinFailure<unknown, SpecOp>, ops: Op[]): Violation {
  const { invoke, end } = failure.op;
  const open = new Set([failure.op.id, ...failure.open.map((op) => op.id)]);
  const noEffect = (op: Op): boolean => op.outcome !== 'ok' || ['availablePermits', 'getCount', 'await'].includes(op.f) || (op.f === 'acquire' && op.value === false);
  // What was open when it failed, and what else ran during the failing operation...
  const during = ops.filter((op) => open.has(op.id) || (op.complete >= invoke && op.invoke <= end && !noEffect(op)));
  // ...and what led there: the last changes of capacity or count, and the last acquisitions and releases, before it began.
  const before = ops.filter((op) => op.complete < invoke && !open.has(op.id) && !noEffect(op));
  const holds = (op: Op): boolean => op.f === 'acquire' || op.f === 'release';
  const lead = [...before.filter((op) => !holds(op)).slice(-4), ...before.filter(holds).slice(-4)];
  const states = [...new Set(failure.before.map(({ state }) => JSON.stringify(state)))];
  const message = `no order of the operations explains the completion of #${failure.op.id} (${failure.op.f}): the states the history allows just before are ${states.join(', ')} (with some of the open operations applied)`;
  return { family, rule: 'linearizability', message, ops: sortOps([...lead, ...during]) };
}

function sortOps(ops: Op[]): Op[] {
  return [...new Set(ops)].sort((a, b) => a.invoke - b.invoke);
}

/** ms since the history's first invocation. */
function ms(history: History, us: number): string {
  if (!Number.isFinite(us)) return 'end';
  const origin = Math.min(...history.ops.map((op) => op.invoke));
  return `${((us - origin) / 1_000).toFixed(1)}ms`;
}

/** A line per operation: `#id [start, end] owner f(args) -> outcome value`, times in ms from the start. */
export function formatOps(history: History, ops: readonly Op[]): string {
  return ops
    .map((op) => {
      const args = Object.entries(op.args)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => `${k}=${String(v)}`)
        .join(' ');
      const result = op.outcome === 'ok' ? `ok ${JSON.stringify(op.value ?? null)}` : op.outcome === 'fail' ? `fail ${op.error}` : 'unknown';
      const lost = op.lost === undefined ? '' : ` lost@${ms(history, op.lost)}`;
      return `  #${op.id} [${ms(history, op.invoke)}, ${ms(history, op.complete)}] ${op.owner} ${op.mode ? `${op.mode} ` : ''}${op.f}(${args}) -> ${result}${lost}`;
    })
    .join('\n');
}

/** The report of a failing run: each violation with its operations, the faults near them, and how to replay the seed. */
export function formatReport(history: History, verdict: Verdict, replay: string): string {
  const lines = [`${verdict.violations.length} violation(s) in seed ${history.seed} (replay: ${replay})`];
  for (const v of verdict.violations.slice(0, 5)) {
    lines.push(`- ${v.family}: ${v.rule}: ${v.message}`, formatOps(history, v.ops));
    if (v.ops.length > 0) {
      const from = Math.min(...v.ops.map((op) => op.invoke)) - 3_000_000;
      const to = Math.max(...v.ops.map((op) => op.complete));
      const near = history.faults.filter((f) => f.end >= from && f.start <= to);
      for (const f of near) lines.push(`  fault ${f.type}${f.client ? ` ${f.client}` : ''} [${ms(history, f.start)}, ${ms(history, f.end)}]`);
    }
  }
  return lines.join('\n');
}
