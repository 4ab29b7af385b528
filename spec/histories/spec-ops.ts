import type { Fault, History, Op } from './history';
import type { SpecOp } from './models';

/**
 * How long after an aborted (or failed) acquisition's rejection its give-back may still reach Redis:
 * the library sends it as soon as the attempt's reply arrives. Stretched by any SIGSTOP of the
 * process that overlaps it.
 */
export const GIVE_BACK_GRACE_US = 1_000_000;

/** `at` stretched by every stop of `client` that overlaps [from, at]. */
export function stretchedByStops(faults: readonly Fault[], client: string, from: number, at: number): number {
  let end = at;
  for (const fault of faults) {
    if (fault.type === 'stop' && fault.client === client && fault.start < end && fault.end > from) end += fault.end - Math.max(fault.start, from);
  }
  return end;
}

/**
 * From when a watchdog permit is doomed to expire: only when something says it was lost (its process
 * was stopped or killed, its handle reported the loss, its release did not succeed), from the first
 * halt of its process after it was acquired (or a lease before the loss was learnt, without one);
 * undefined when nothing says so.
 */
function doomedFrom(history: History, acquire: Op, release: Op | undefined): number | undefined {
  if (release?.outcome === 'ok') return undefined;
  const leaseUs = history.nodeLeaseMs * 1_000;
  const halts = history.faults.filter((f) => (f.type === 'stop' || f.type === 'kill') && f.client === acquire.client && f.end >= acquire.invoke);
  const kill = halts.find((f) => f.type === 'kill');
  const learnt = [acquire.lost, release?.complete, kill && kill.start + leaseUs].filter((t) => t !== undefined);
  if (learnt.length === 0) return undefined;
  const cause = halts.find((f) => f.start <= Math.min(...learnt))?.start ?? Math.min(...learnt) - leaseUs;
  return Math.max(acquire.complete, cause);
}

const isNotHeld = (op: Op): boolean => /NOT_HELD|has already been released|doesn't exist|IllegalArgument|IllegalMonitor/i.test(op.error ?? '');

/**
 * The operations of one counting object (semaphore, expirable semaphore or latch) as the
 * linearizability search sees them: completed ones must take effect by their completion; failed or
 * unknown ones may take effect within their window, or never; an aborted acquisition may take its
 * permits and give them back later (the library's give-back); a lost watchdog permit is doomed and expires at a moment of its own.
 * Redis restarts wipe the object. Acquisitions that returned nothing and reads that failed have no
 * effect and are left out.
 */
export function specOps(history: History, ops: readonly Op[]): SpecOp[] {
  const out: SpecOp[] = [];
  let synthetic = 1_000_000_000;
  const releaseOf = new Map<number, Op>();
  const byId = new Map(ops.map((op) => [op.id, op]));
  for (const op of ops) if (op.f === 'release' && typeof op.args.of === 'number') releaseOf.set(op.args.of, op);
  const base = (op: Op, must: boolean, endAt = op.complete) => ({ id: op.id, invoke: op.invoke, end: endAt, must });

  for (const op of ops) {
    const ok = op.outcome === 'ok';
    const value = ok ? op.value : undefined;
    const permit = op.family === 'expirableSemaphore' ? (typeof op.value === 'string' ? op.value : `?${op.id}`) : undefined;
    switch (op.f) {
      case 'acquire': {
        if (ok && op.value === false) break;
        if (ok) {
          out.push({ ...base(op, true), f: 'take', n: 1, permit });
          const from = op.args.watchdog ? doomedFrom(history, op, releaseOf.get(op.id)) : undefined;
          if (from !== undefined) out.push({ id: synthetic++, invoke: from, end: from, must: true, f: 'doom', n: 1, permit });
          break;
        }
        // Aborted, failed or unknown: it may have taken permits, and the library may have given them back.
        const until = stretchedByStops(history.faults, op.client, op.complete, op.complete + GIVE_BACK_GRACE_US);
        out.push({ ...base(op, false, until), f: 'take', n: 1, permit });
        out.push({ id: synthetic++, invoke: op.invoke, end: until, must: false, f: 'give', n: 1, permit, value: true, after: op.id, cancels: true });
        // Unless its process died first: then a watchdog permit it may have taken expires.
        const kill = history.faults.find((f) => f.type === 'kill' && f.client === op.client && f.start >= op.invoke && f.start <= until);
        if (op.args.watchdog && kill) out.push({ id: synthetic++, invoke: until, end: until, must: true, f: 'doom', n: 1, permit });
        break;
      }
      case 'release': {
        const acquiredBy = typeof op.args.of === 'number' ? byId.get(op.args.of) : undefined;
        const id = op.family === 'expirableSemaphore' ? (typeof op.args.permitId === 'string' ? op.args.permitId : typeof acquiredBy?.value === 'string' ? acquiredBy.value : undefined) : undefined;
        if (op.family === 'expirableSemaphore') {
          out.push({ ...base(op, op.outcome !== 'unknown'), f: 'give', n: 1, permit: id, value: ok ? true : isNotHeld(op) ? false : undefined });
        } else {
          out.push({ ...base(op, ok), f: 'give', n: 1 });
        }
        break;
      }
      case 'addPermits':
        out.push({ ...base(op, ok), f: 'add', n: Number(op.args.permits) });
        break;
      case 'trySetPermits':
      case 'trySetCount':
        out.push({ ...base(op, ok), f: 'trySet', n: Number(op.args.permits ?? op.args.count), value });
        break;
      case 'drainPermits':
        out.push({ ...base(op, ok), f: 'drain', n: 0, value: value === undefined ? undefined : Number(value) });
        break;
      case 'delete':
        out.push({ ...base(op, ok), f: 'delete', n: 0, value });
        break;
      case 'availablePermits':
      case 'getCount':
        if (ok) out.push({ ...base(op, true), f: 'read', n: 0, value: Number(value) });
        break;
      case 'countDown':
        out.push({ ...base(op, ok), f: 'countDown', n: 1 });
        break;
      case 'await':
        if (ok && value === true) out.push({ ...base(op, true), f: 'await', n: 0 });
        break;
    }
  }
  for (const fault of history.faults) {
    if (fault.type === 'redis-restart') out.push({ id: synthetic++, invoke: fault.start, end: fault.end, must: true, f: 'wipe', n: 0 });
  }
  return out;
}
