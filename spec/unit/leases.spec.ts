import type { LockLostError } from '../../lib/errors';
import type { Lease, LeaseKind, LeaseTerm } from '../../lib/kernel/leases/lease';
import { LeaseTracker, RENEWAL_CALLS_IN_FLIGHT } from '../../lib/kernel/leases/tracker';
import { HoldLedger, type HeldLock } from '../../lib/kernel/hold-ledger';

/** Renews a batch: one flag per lease. */
type RenewBatch = (batch: readonly Lease[]) => Promise<boolean[]>;

/** A lease kind that renews through `renew`. */
const kindOf = (renew: RenewBatch, noun = 'Lock'): LeaseKind => ({ noun, renew: (batch) => renew(batch) });

/**
 * A tracker on fake timers with one lock ledger, renewing through `held` (the set of names still
 * held) or failing.
 */
function setUp(
  options: { batchSize?: number; callsInFlight?: number; groupOf?: (name: string) => number; renew?: RenewBatch } = {},
) {
  const held = new Set<string>();
  const calls: string[][] = [];
  let failing = false;
  const renew: RenewBatch =
    options.renew ??
    ((batch) => {
      calls.push(batch.map((lease) => lease.name));
      if (failing) return Promise.reject(new Error('connection lost'));
      return Promise.resolve(batch.map((lease) => held.has(lease.name)));
    });
  const lost: LockLostError[] = [];
  const renewalErrors: unknown[] = [];
  const tracker = new LeaseTracker({
    renewalLease: 300,
    batchSize: options.batchSize ?? 100,
    callsInFlight: options.callsInFlight ?? RENEWAL_CALLS_IN_FLIGHT,
    groupOf: options.groupOf ?? (() => 0),
    onLost: (error) => lost.push(error),
    onRenewalError: (error) => renewalErrors.push(error),
    now: () => Date.now(),
  });
  const ledger = new HoldLedger(tracker, kindOf(renew));
  return { tracker, ledger, held, calls, lost, renewalErrors, fail: (on: boolean) => (failing = on) };
}

/** Counts one acquisition by `owner` of `name` that set `term`, as an answered acquire does. */
function hold(ledger: HoldLedger, name: string, owner: string, term: LeaseTerm): HeldLock {
  const record = ledger.beginAcquire(name, owner, Number(owner.split(':')[1]), 'lock');
  ledger.endAcquire(record, term);
  return record;
}

/** Advances fake time and lets the scheduler's promises run. */
async function advance(ms: number): Promise<void> {
  await jest.advanceTimersByTimeAsync(ms);
}

describe('LeaseTracker and HoldLedger', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('renews every third of the lease, in batches, and stops with the last release', async () => {
    const { ledger, held, calls } = setUp({ batchSize: 2 });
    for (const name of ['a', 'b', 'c']) {
      held.add(name);
      hold(ledger, name, 'o:1', { sentAt: Date.now(), leaseTime: 300, renew: true });
    }
    await advance(100);
    expect(calls).toEqual([['a', 'b'], ['c']]);
    await advance(100);
    expect(calls).toHaveLength(4);
    for (const name of ['a', 'b', 'c']) ledger.release(name, 'o:1');
    expect(jest.getTimerCount()).toBe(0);
    await advance(1_000);
    expect(calls).toHaveLength(4);
  });

  it('keeps callsInFlight calls of a round in flight, in order; a failed one is reported and the round goes on until shutdown', async () => {
    const calls: { names: string[]; answer: (held: boolean) => void }[] = [];
    const { tracker, ledger, lost, renewalErrors } = setUp({
      batchSize: 1,
      callsInFlight: 2,
      renew: (batch) =>
        new Promise((resolve, reject) => {
          const answer = (held: boolean): void => (held ? resolve(batch.map(() => true)) : reject(new Error('busy')));
          calls.push({ names: batch.map((lease) => lease.name), answer });
        }),
    });
    for (const name of ['a', 'b', 'c', 'd'])
      hold(ledger, name, 'o:1', { sentAt: Date.now(), leaseTime: 300, renew: true });
    const sent = (): string[] => calls.flatMap((call) => call.names);
    await advance(100);
    expect(sent()).toEqual(['a', 'b']);
    calls[1]!.answer(false);
    await advance(0);
    expect(sent()).toEqual(['a', 'b', 'c']);
    expect(renewalErrors).toEqual([new Error('busy')]);
    expect(lost).toHaveLength(0); // b's term has not ended
    tracker.shutdown();
    calls[0]!.answer(true);
    calls[2]!.answer(true);
    await advance(1_000);
    expect(sent()).toEqual(['a', 'b', 'c']); // d's call never goes out
    expect(lost).toHaveLength(4);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('never puts leases of different groups (cluster slots) in one call', async () => {
    const { tracker, ledger, held, calls } = setUp({ groupOf: (name) => name.charCodeAt(0) % 2 });
    for (const name of ['a', 'b', 'c', 'd']) {
      held.add(name);
      hold(ledger, name, 'o:1', { sentAt: Date.now(), leaseTime: 300, renew: true });
    }
    await advance(100);
    expect(calls.map((names) => names.sort().join(''))).toEqual(['ac', 'bd']);
    tracker.shutdown();
  });

  it('never puts leases of different kinds in one call, and names the kind in the loss', async () => {
    const { tracker, ledger, held, calls, lost } = setUp();
    const permitCalls: string[][] = [];
    const permits = new HoldLedger(tracker, kindOf((batch) => {
      permitCalls.push(batch.map((lease) => lease.name));
      return Promise.resolve(batch.map(() => false));
    }, 'Permit'));
    held.add('a');
    hold(ledger, 'a', 'o:1', { sentAt: Date.now(), leaseTime: 300, renew: true });
    hold(permits, 'p', 'id-1', { sentAt: Date.now(), leaseTime: 300, renew: true });
    await advance(100);
    expect(calls).toEqual([['a']]);
    expect(permitCalls).toEqual([['p']]);
    expect(lost.map((error) => error.message)).toEqual([expect.stringMatching(/^Permit 'p' was lost/)]);
    tracker.shutdown();
  });

  it('counts reentrant holds: renewal goes on until the last one is released', async () => {
    const { tracker, ledger, held, calls } = setUp();
    held.add('a');
    hold(ledger, 'a', 'o:1', { sentAt: Date.now(), leaseTime: 300, renew: true });
    hold(ledger, 'a', 'o:1', { sentAt: Date.now(), leaseTime: 300, renew: true });
    ledger.release('a', 'o:1');
    await advance(100);
    expect(calls).toHaveLength(1);
    ledger.release('a', 'o:1');
    expect(tracker.size).toBe(0);
  });

  it('declares a lease lost when renewal finds it gone, telling its listeners and onLost', async () => {
    const { tracker, ledger, lost } = setUp();
    const lease = hold(ledger, 'a', 'o:1', { sentAt: Date.now(), leaseTime: 300, renew: true });
    const heard: LockLostError[] = [];
    lease.watch((error) => heard.push(error));
    await advance(100);
    expect(heard).toHaveLength(1);
    expect(lost).toEqual(heard);
    expect(heard[0]).toMatchObject({ lockName: 'a', owner: 'o:1' });
    expect(tracker.size).toBe(0);
  });

  it('declares a lease lost exactly when it ends if every renewal failed', async () => {
    const { ledger, held, lost, calls, fail, renewalErrors } = setUp();
    held.add('a');
    fail(true);
    hold(ledger, 'a', 'o:1', { sentAt: Date.now(), leaseTime: 300, renew: true });
    await advance(299);
    expect(lost).toHaveLength(0);
    expect(calls.length).toBeGreaterThanOrEqual(2);
    await advance(1);
    expect(lost).toHaveLength(1);
    expect(lost[0]!.message).toMatch(/no renewal/);
    expect(renewalErrors.length).toBeGreaterThanOrEqual(2); // each failed round was reported
  });

  it('declares a lease lost at its end even while a renewal of it hangs', async () => {
    const { ledger, lost } = setUp({ renew: () => new Promise(() => undefined) }); // Redis never answers
    hold(ledger, 'a', 'o:1', { sentAt: Date.now(), leaseTime: 300, renew: true });
    await advance(299);
    expect(lost).toHaveLength(0);
    await advance(1);
    expect(lost).toHaveLength(1);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('recovers from failed renewals that succeed again before the lease ends', async () => {
    const { tracker, ledger, held, lost, fail } = setUp();
    held.add('a');
    fail(true);
    hold(ledger, 'a', 'o:1', { sentAt: Date.now(), leaseTime: 300, renew: true });
    await advance(150);
    fail(false);
    await advance(1_000);
    expect(lost).toHaveLength(0);
    expect(tracker.size).toBe(1);
    tracker.shutdown();
    expect(jest.getTimerCount()).toBe(0);
  });

  it('reports the end of an explicit lease not released in time, without renewing it', async () => {
    const { ledger, calls, lost } = setUp();
    hold(ledger, 'a', 'o:1', { sentAt: Date.now(), leaseTime: 50, renew: false });
    await advance(49);
    expect(lost).toHaveLength(0);
    await advance(1);
    expect(lost).toHaveLength(1);
    expect(lost[0]!.message).toMatch(/lease ended/);
    expect(calls).toHaveLength(0);
  });

  it('reports a loss at once when the event loop was blocked past the lease', async () => {
    const { ledger, held, lost, calls } = setUp();
    held.add('a');
    hold(ledger, 'a', 'o:1', { sentAt: Date.now(), leaseTime: 300, renew: true });
    jest.setSystemTime(Date.now() + 1_000); // the clock moves on while no timer can run
    await advance(100); // the overdue renewal timer finally fires
    expect(lost).toHaveLength(1);
    expect(calls).toHaveLength(0); // too late to renew: the lease has already ended
  });

  it('counts acquisitions in flight in the holds an owner may have, and across a loss', async () => {
    const { tracker, ledger, lost } = setUp();
    hold(ledger, 'a', 'o:1', { sentAt: Date.now(), leaseTime: 300, renew: true });
    const reentry = ledger.beginAcquire('a', 'o:1', 1, 'lock');
    expect(reentry.believedHolds).toBe(1);
    await advance(100); // renewal finds the lock gone while the re-entry is in flight
    expect(lost).toHaveLength(1);
    expect(tracker.size).toBe(0);
    const next = ledger.beginAcquire('a', 'o:1', 1, 'lock');
    expect(next).toBe(reentry); // still tracked: the re-entry in flight may land as a fresh hold
    expect(next.believedHolds).toBe(1);
    ledger.endAcquire(reentry, { sentAt: Date.now(), leaseTime: 300, renew: true });
    ledger.endAcquire(next);
    expect(tracker.size).toBe(1);
    expect(ledger.release('a', 'o:1')).toMatchObject({ holds: 0 });
    expect(ledger.release('a', 'o:1')).toBeUndefined();
    expect(ledger.beginAcquire('a', 'o:1', 1, 'lock')).not.toBe(reentry); // dropped once idle
    tracker.shutdown();
  });

  it('forgets every hold of a lease at once, and its listeners with the last hold', async () => {
    const { tracker, ledger, lost, calls } = setUp();
    const lease = hold(ledger, 'a', 'o:1', { sentAt: Date.now(), leaseTime: 300, renew: true });
    hold(ledger, 'a', 'o:1', { sentAt: Date.now(), leaseTime: 300, renew: true });
    const heard: LockLostError[] = [];
    lease.watch((error) => heard.push(error));
    ledger.forget(lease);
    expect(tracker.size).toBe(0);
    expect(jest.getTimerCount()).toBe(0);
    await advance(1_000);
    expect(calls).toHaveLength(0);
    expect([...heard, ...lost]).toHaveLength(0);
  });

  it('keeps the owners of one name apart, and finds the newest unscoped holder by the name alone', () => {
    const { tracker, ledger } = setUp();
    const term = { sentAt: Date.now(), leaseTime: 300, renew: false };
    const first = hold(ledger, 'a', 'o:1', term);
    const second = hold(ledger, 'a', 'o:2', term);
    const third = hold(ledger, 'a', 'o:3', term);
    first.unscoped = true;
    third.unscoped = true;
    expect(ledger.find('a', 'o:2')).toBe(second);
    expect(ledger.find('a', 'o:4')).toBeUndefined();
    expect(ledger.unscopedHolder('a')).toBe(3);
    expect(ledger.release('a', 'o:3')).toBe(third); // its last hold: out of the ledger
    expect(ledger.unscopedHolder('a')).toBe(1);
    expect(ledger.release('a', 'o:2')).toBe(second); // out of the middle of the chain
    expect(ledger.find('a', 'o:1')).toBe(first);
    expect(ledger.find('a', 'o:2')).toBeUndefined();
    ledger.unreleased(second); // its release may not have landed: counted again
    expect(ledger.find('a', 'o:2')).toBe(second);
    ledger.loseAll('a', 'deleted');
    expect([ledger.find('a', 'o:1'), ledger.find('a', 'o:2'), ledger.unscopedHolder('a')]).toEqual([undefined, undefined, undefined]);
    expect(tracker.size).toBe(0);
  });
});
