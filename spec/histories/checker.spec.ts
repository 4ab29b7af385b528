import { checkHistory } from './check';
import type { Fault, History, Op } from './history';

/** The checker on small written histories: each rule flags what it must and accepts what it must. Times in ms. */
function history(ops: Partial<Op>[], faults: Fault[] = []): History {
  const full = ops.map((op, id) => {
    const client = op.client ?? op.owner!.split('/')[0]!;
    return { id, name: `h:${op.family}`, args: {}, outcome: 'ok', client, ...op, invoke: op.invoke! * 1_000, complete: op.complete! * 1_000 } as Op;
  });
  const us = faults.map((f) => ({ ...f, start: f.start * 1_000, end: f.end * 1_000 }));
  return { seed: 0, opsPerKind: 0, ops: full, faults: us, nodeLeaseMs: 2_000, javaLeaseMs: 10_000 };
}

const rules = (h: History): string[] => checkHistory(h).violations.map((v) => `${v.family}: ${v.rule}`);

describe('semaphore', () => {
  const cut = (acquiredAt: number): Partial<Op>[] => [
    { family: 'semaphore', owner: 'java/1', f: 'trySetPermits', args: { permits: 2 }, invoke: 0, complete: 1, value: true },
    { family: 'semaphore', owner: 'n1.0/1', f: 'acquire', invoke: 2, complete: 3, value: true },
    { family: 'semaphore', owner: 'n1.0/2', f: 'acquire', invoke: 4, complete: 5, value: true },
    { family: 'semaphore', owner: 'n1.0/3', f: 'acquire', invoke: 6, complete: acquiredAt, value: true },
    { family: 'semaphore', owner: 'java/1', f: 'addPermits', args: { permits: -1 }, invoke: 8, complete: 9, value: null },
    { family: 'semaphore', owner: 'n1.0/1', f: 'release', args: { of: 1 }, invoke: 10, complete: 11, value: true },
  ];

  it('flags a parked owner that got a permit released after a cut to capacity 1', () => {
    expect(rules(history(cut(12)))).toEqual(['semaphore: linearizability']);
  });

  it('accepts the same acquisition before the cut', () => {
    const ops = cut(12);
    ops[4] = { ...ops[4], invoke: 13, complete: 14 };
    expect(rules(history(ops))).toEqual([]);
  });

  it('an aborted acquisition may have taken a permit and given it back later', () => {
    const ops: Partial<Op>[] = [
      { family: 'semaphore', owner: 'java/1', f: 'trySetPermits', args: { permits: 1 }, invoke: 0, complete: 1, value: true },
      { family: 'semaphore', owner: 'n1.0/1', f: 'acquire', args: { waitMs: 100, abortMs: 3 }, invoke: 2, complete: 5, outcome: 'fail', error: 'ABORTED' },
      { family: 'semaphore', owner: 'java/1', f: 'drainPermits', invoke: 3, complete: 4, value: 0 },
      { family: 'semaphore', owner: 'java/1', f: 'availablePermits', invoke: 7, complete: 8, value: 1 },
    ];
    expect(rules(history(ops))).toEqual([]);
    ops[3] = { ...ops[3], invoke: 3_000, complete: 3_001, value: 2 };
    expect(rules(history(ops))).toEqual(['semaphore: linearizability']);
  });
});

describe('locks', () => {
  // n1's hold [1, 5100] and n2's [2500, 2700]; n1 learnt of a loss at 5000 (lost) unless `release` succeeds.
  const overlap = (release: Partial<Op>): Partial<Op>[] => [
    { family: 'lock', owner: 'n1.0/1', f: 'acquire', invoke: 0, complete: 1, value: true, lost: release.outcome === 'fail' ? 5_000_000 : undefined },
    { family: 'lock', owner: 'n2.0/1', f: 'acquire', invoke: 2_000, complete: 2_500, value: true },
    { family: 'lock', owner: 'n2.0/1', f: 'release', args: { of: 1 }, invoke: 2_700, complete: 2_800, value: true },
    { family: 'lock', owner: 'n1.0/1', f: 'release', args: { of: 0 }, invoke: 5_100, complete: 5_101, ...release },
  ];

  it('flags two certain holds at once', () => {
    expect(rules(history(overlap({ value: true })))).toEqual(['lock: mutual exclusion']);
  });

  it('does not blame a holder stopped past its lease for the time it could not know', () => {
    const stop: Fault = { type: 'stop', client: 'n1.0', start: 1_000, end: 4_900 };
    expect(rules(history(overlap({ outcome: 'fail', error: 'ERR_LOCK_NOT_HELD' }), [stop]))).toEqual([]);
  });

  it('a lost hold with no fault to explain it counts until a lease before it was learnt', () => {
    expect(rules(history(overlap({ outcome: 'fail', error: 'ERR_LOCK_NOT_HELD' })))).toEqual(['lock: mutual exclusion']);
  });

  it('read holds share, a write hold does not; an owner may hold both', () => {
    const rw: Partial<Op>[] = [
      { family: 'rwLock', mode: 'read', owner: 'n1.0/1', f: 'acquire', invoke: 0, complete: 1, value: true },
      { family: 'rwLock', mode: 'read', owner: 'java/2', f: 'acquire', invoke: 2, complete: 3, value: true },
      { family: 'rwLock', mode: 'write', owner: 'n1.0/2', f: 'acquire', invoke: 4, complete: 5, value: true },
    ];
    expect(rules(history(rw))).toEqual(['rwLock: readers/writer exclusion', 'rwLock: readers/writer exclusion']);
    rw[2] = { ...rw[2], owner: 'n1.0/1' };
    expect(rules(history(rw))).toEqual(['rwLock: readers/writer exclusion']);
  });

  it('flags a fencing token that did not increase', () => {
    const fenced: Partial<Op>[] = [
      { family: 'fencedLock', owner: 'n1.0/1', f: 'acquire', invoke: 0, complete: 1, value: 5 },
      { family: 'fencedLock', owner: 'n1.0/1', f: 'release', args: { of: 0 }, invoke: 2, complete: 3, value: true },
      { family: 'fencedLock', owner: 'java/1', f: 'acquire', invoke: 4, complete: 5, value: 5 },
    ];
    expect(rules(history(fenced))).toEqual(['fencedLock: fencing tokens']);
    fenced[2] = { ...fenced[2], invoke: 0.5, value: 6 }; // concurrent, larger: fine
    expect(rules(history(fenced))).toEqual([]);
    fenced[2] = { ...fenced[2], value: 5 }; // concurrent, but the same token
    expect(rules(history(fenced))).toEqual(['fencedLock: fencing tokens']);
  });
});

describe('latch and expirable semaphore', () => {
  it('flags an await that returned true while the count never reached zero', () => {
    const ops: Partial<Op>[] = [
      { family: 'latch', owner: 'java/1', f: 'trySetCount', args: { count: 1 }, invoke: 0, complete: 1, value: true },
      { family: 'latch', owner: 'n1.0/1', f: 'await', args: { waitMs: 10 }, invoke: 2, complete: 4, value: true },
    ];
    expect(rules(history(ops))).toEqual(['latch: linearizability']);
    ops.push({ family: 'latch', owner: 'n2.0/1', f: 'countDown', invoke: 3, complete: 3.5, value: null });
    expect(rules(history(ops))).toEqual([]);
  });

  it('a stopped holder`s watchdog permit may expire and go to someone else', () => {
    const ops: Partial<Op>[] = [
      { family: 'expirableSemaphore', owner: 'java/1', f: 'trySetPermits', args: { permits: 1 }, invoke: 0, complete: 1, value: true },
      { family: 'expirableSemaphore', owner: 'n1.0/1', f: 'acquire', args: { watchdog: true }, invoke: 2, complete: 3, value: 'a', lost: 5_000_000 },
      { family: 'expirableSemaphore', owner: 'n2.0/1', f: 'acquire', args: { waitMs: 5_000 }, invoke: 4, complete: 4_000, value: 'b' },
    ];
    const stop: Fault = { type: 'stop', client: 'n1.0', start: 500, end: 4_900 };
    expect(rules(history(ops, [stop]))).toEqual([]);
    ops[1] = { ...ops[1], lost: undefined };
    expect(rules(history(ops))).toEqual(['expirableSemaphore: linearizability']);
  });
});
