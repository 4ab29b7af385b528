import { LockLostError } from '../../lib/errors';
import { RenewalScheduler, type LeaseTerm, type RenewBatch, type TrackedLease } from '../../lib/renewal/scheduler';

/** A scheduler on fake timers, renewing through `held` (the set of names still held) or failing. */
function setUp(options: { batchSize?: number; groupOf?: (name: string) => number } = {}) {
  const held = new Set<string>();
  const calls: string[][] = [];
  let failing = false;
  const renew: RenewBatch = async (names) => {
    calls.push([...names]);
    if (failing) throw new Error('connection lost');
    return names.map((name) => held.has(name));
  };
  const lost: LockLostError[] = [];
  const scheduler = new RenewalScheduler({
    watchdogTimeout: 300,
    batchSize: options.batchSize ?? 100,
    groupOf: options.groupOf ?? (() => 0),
    renew,
    onLost: (error) => lost.push(error),
    now: () => Date.now(),
  });
  return { scheduler, held, calls, lost, fail: (on: boolean) => (failing = on) };
}

/** Counts one acquisition by `owner` of `name` that set `term`, as an answered acquire does. */
function hold(scheduler: RenewalScheduler, name: string, owner: string, term: LeaseTerm): TrackedLease {
  const lease = scheduler.beginAcquire(name, owner);
  scheduler.endAcquire(lease, term);
  return lease;
}

/** Advances fake time and lets the scheduler's promises run. */
async function advance(ms: number): Promise<void> {
  await jest.advanceTimersByTimeAsync(ms);
}

describe('RenewalScheduler', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('renews every third of the lease, in batches, and stops with the last release', async () => {
    const { scheduler, held, calls } = setUp({ batchSize: 2 });
    for (const name of ['a', 'b', 'c']) {
      held.add(name);
      hold(scheduler, name, 'o:1', { sentAt: Date.now(), leaseTime: 300, renew: true });
    }
    await advance(100);
    expect(calls).toEqual([['a', 'b'], ['c']]);
    await advance(100);
    expect(calls).toHaveLength(4);
    for (const name of ['a', 'b', 'c']) scheduler.unregister(name, 'o:1');
    expect(jest.getTimerCount()).toBe(0);
    await advance(1_000);
    expect(calls).toHaveLength(4);
  });

  it('never puts leases of different groups (cluster slots) in one call', async () => {
    const { scheduler, held, calls } = setUp({ groupOf: (name) => name.charCodeAt(0) % 2 });
    for (const name of ['a', 'b', 'c', 'd']) {
      held.add(name);
      hold(scheduler, name, 'o:1', { sentAt: Date.now(), leaseTime: 300, renew: true });
    }
    await advance(100);
    expect(calls.map((names) => names.sort().join(''))).toEqual(['ac', 'bd']);
    scheduler.shutdown();
  });

  it('counts reentrant holds: renewal goes on until the last one is released', async () => {
    const { scheduler, held, calls } = setUp();
    held.add('a');
    hold(scheduler, 'a', 'o:1', { sentAt: Date.now(), leaseTime: 300, renew: true });
    hold(scheduler, 'a', 'o:1', { sentAt: Date.now(), leaseTime: 300, renew: true });
    scheduler.unregister('a', 'o:1');
    await advance(100);
    expect(calls).toHaveLength(1);
    scheduler.unregister('a', 'o:1');
    expect(scheduler.size).toBe(0);
  });

  it('declares a lease lost when renewal finds it gone, telling its listeners and onLost', async () => {
    const { scheduler, lost } = setUp();
    const lease = hold(scheduler, 'a', 'o:1', { sentAt: Date.now(), leaseTime: 300, renew: true });
    const heard: LockLostError[] = [];
    lease.watch((error) => heard.push(error));
    await advance(100);
    expect(heard).toHaveLength(1);
    expect(lost).toEqual(heard);
    expect(heard[0]).toMatchObject({ lockName: 'a', owner: 'o:1' });
    expect(scheduler.size).toBe(0);
  });

  it('declares a lease lost exactly when it ends if every renewal failed', async () => {
    const { scheduler, held, lost, calls, fail } = setUp();
    held.add('a');
    fail(true);
    hold(scheduler, 'a', 'o:1', { sentAt: Date.now(), leaseTime: 300, renew: true });
    await advance(299);
    expect(lost).toHaveLength(0);
    expect(calls.length).toBeGreaterThanOrEqual(2);
    await advance(1);
    expect(lost).toHaveLength(1);
    expect(lost[0]!.message).toMatch(/no renewal/);
  });

  it('declares a lease lost at its end even while a renewal of it hangs', async () => {
    const lost: LockLostError[] = [];
    const scheduler = new RenewalScheduler({
      watchdogTimeout: 300,
      batchSize: 100,
      groupOf: () => 0,
      renew: () => new Promise(() => undefined), // Redis never answers
      onLost: (error) => lost.push(error),
      now: () => Date.now(),
    });
    hold(scheduler, 'a', 'o:1', { sentAt: Date.now(), leaseTime: 300, renew: true });
    await advance(299);
    expect(lost).toHaveLength(0);
    await advance(1);
    expect(lost).toHaveLength(1);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('recovers from failed renewals that succeed again before the lease ends', async () => {
    const { scheduler, held, lost, fail } = setUp();
    held.add('a');
    fail(true);
    hold(scheduler, 'a', 'o:1', { sentAt: Date.now(), leaseTime: 300, renew: true });
    await advance(150);
    fail(false);
    await advance(1_000);
    expect(lost).toHaveLength(0);
    expect(scheduler.size).toBe(1);
    scheduler.shutdown();
    expect(jest.getTimerCount()).toBe(0);
  });

  it('reports the end of an explicit lease not released in time, without renewing it', async () => {
    const { scheduler, calls, lost } = setUp();
    hold(scheduler, 'a', 'o:1', { sentAt: Date.now(), leaseTime: 50, renew: false });
    await advance(49);
    expect(lost).toHaveLength(0);
    await advance(1);
    expect(lost).toHaveLength(1);
    expect(lost[0]!.message).toMatch(/lease ended/);
    expect(calls).toHaveLength(0);
  });

  it('reports a loss at once when the event loop was blocked past the lease', async () => {
    const { scheduler, held, lost, calls } = setUp();
    held.add('a');
    hold(scheduler, 'a', 'o:1', { sentAt: Date.now(), leaseTime: 300, renew: true });
    jest.setSystemTime(Date.now() + 1_000); // the clock moves on while no timer can run
    await advance(100); // the overdue renewal timer finally fires
    expect(lost).toHaveLength(1);
    expect(calls).toHaveLength(0); // too late to renew: the lease has already ended
  });

  it('counts acquisitions in flight in the holds an owner may have, and across a loss', async () => {
    const { scheduler, lost } = setUp();
    hold(scheduler, 'a', 'o:1', { sentAt: Date.now(), leaseTime: 300, renew: true });
    const reentry = scheduler.beginAcquire('a', 'o:1');
    expect(reentry.believedHolds).toBe(1);
    await advance(100); // renewal finds the lock gone while the re-entry is in flight
    expect(lost).toHaveLength(1);
    expect(scheduler.size).toBe(0);
    const next = scheduler.beginAcquire('a', 'o:1');
    expect(next).toBe(reentry); // still tracked: the re-entry in flight may land as a fresh hold
    expect(next.believedHolds).toBe(1);
    scheduler.endAcquire(reentry, { sentAt: Date.now(), leaseTime: 300, renew: true });
    scheduler.endAcquire(next);
    expect(scheduler.size).toBe(1);
    expect(scheduler.unregister('a', 'o:1')).toMatchObject({ holds: 0 });
    expect(scheduler.unregister('a', 'o:1')).toBeUndefined();
    expect(scheduler.beginAcquire('a', 'o:1')).not.toBe(reentry); // dropped once idle
    scheduler.shutdown();
  });

  it('forgets every hold of a lease at once, and its listeners with the last hold', async () => {
    const { scheduler, lost, calls } = setUp();
    const lease = hold(scheduler, 'a', 'o:1', { sentAt: Date.now(), leaseTime: 300, renew: true });
    hold(scheduler, 'a', 'o:1', { sentAt: Date.now(), leaseTime: 300, renew: true });
    const heard: LockLostError[] = [];
    lease.watch((error) => heard.push(error));
    scheduler.forget(lease);
    expect(scheduler.size).toBe(0);
    expect(jest.getTimerCount()).toBe(0);
    await advance(1_000);
    expect(calls).toHaveLength(0);
    expect([...heard, ...lost]).toHaveLength(0);
  });
});
