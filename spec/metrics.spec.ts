import { LockLostError, type RedissonClient, type RedissonEvents } from '../lib';
import { permitTimeoutKey } from '../lib/keys';
import { delay, useRedis } from './helpers/fixture';
import { eventually } from './helpers/redis-server';

const { admin, client } = useRedis();

/** Every event of `type` the client emits from now on. */
function record<K extends keyof RedissonEvents>(redisson: ReturnType<typeof client>, type: K): RedissonEvents[K][] {
  const events: RedissonEvents[K][] = [];
  redisson.on(type, (event) => events.push(event));
  return events;
}

describe('metrics: the figures the events carry', () => {
  it('a free lock: one attempt, no wake-up; the release reports the time held', async () => {
    const redisson = client();
    const acquired = record(redisson, 'acquired');
    const released = record(redisson, 'released');
    const handle = await redisson.getLock('m:free').acquire();
    expect(acquired).toEqual([expect.objectContaining({ name: 'm:free', attempts: 1, wakeUps: 0 })]);
    await delay(120);
    await handle.release();
    expect(released).toHaveLength(1);
    expect(released[0]!.fully).toBe(true);
    expect(released[0]!.heldMs).toBeGreaterThanOrEqual(100);
  });

  it('a waiter: its wait, its attempts and the release message that woke it', async () => {
    const holder = client();
    const waiter = client();
    const acquired = record(waiter, 'acquired');
    const held = await holder.getLock('m:busy').acquire({ leaseTime: 30_000 });
    const waiting = waiter.getLock('m:busy').acquire({ waitTime: 20_000 });
    await eventually(() => waiter.diagnostics().waiters === 1, 10_000, 'a parked waiter');
    await delay(100);
    await held.release();
    await (await waiting).release();
    expect(acquired).toHaveLength(1);
    const [event] = acquired;
    expect(event!.attempts).toBeGreaterThanOrEqual(2); // refused, then after the subscription, then woken
    expect(event!.wakeUps).toBe(1);
    expect(event!.waitMs).toBeGreaterThanOrEqual(100);
  });

  it('reports each way an acquisition can end without the lock', async () => {
    const holder = client();
    const waiter = client();
    const failed = record(waiter, 'acquireFailed');
    await holder.getLock('m:taken').lock({ leaseTime: 30_000 });
    expect(await waiter.getLock('m:taken').tryLock({ waitTime: 50 })).toBe(false);
    const controller = new AbortController();
    const aborted = waiter.getLock('m:taken').lock({ signal: controller.signal });
    await delay(50);
    controller.abort(new Error('stop'));
    await expect(aborted).rejects.toThrow('stop');
    const closing = expect(waiter.getLock('m:taken').lock()).rejects.toThrow(/shut down/);
    await delay(50);
    await waiter.shutdown();
    await closing;
    expect(failed.map((event) => event.reason)).toEqual(['timeout', 'aborted', 'closed']);
    expect(failed[0]!.waitMs).toBeGreaterThanOrEqual(45);
    expect(failed.every((event) => event.name === 'm:taken' && event.attempts >= 1)).toBe(true);
  });
});

/** Something held that gives itself back. */
interface Held {
  release(): Promise<unknown>;
}

/** One kind as the table below drives it: every kind emits the same events with the same figures. */
interface KindUnderTest {
  kind: string;
  /** Takes `name` on `redisson` within `waitTime` ms: what it holds (a latch: nothing), or `null`. */
  take(redisson: RedissonClient, name: string, waitTime: number): Promise<Held | null>;
  /** Makes `name` unavailable to others on `holder`; resolves what makes it available again. */
  occupy(holder: RedissonClient, name: string): Promise<() => Promise<unknown>>;
  /** A release message wakes its waiter (not a spin lock, which re-checks; not a composite, which waits in rounds). */
  wakes: boolean;
  /** It holds something, so its release emits `released` (not a latch). */
  holds: boolean;
}

const lockUnderTest = (
  kind: string,
  of: (redisson: RedissonClient, name: string) => { tryAcquire(options: { waitTime: number }): Promise<Held | null> },
  wakes = true,
): KindUnderTest => ({
  kind,
  take: (redisson, name, waitTime) => of(redisson, name).tryAcquire({ waitTime }),
  occupy: async (holder, name) => {
    const held = (await of(holder, name).tryAcquire({ waitTime: 5_000 }))!;
    return () => held.release();
  },
  wakes,
  holds: true,
});

const semaphoreUnderTest = (
  kind: string,
  of: (
    redisson: RedissonClient,
    name: string,
  ) => {
    trySetPermits(permits: number): Promise<boolean>;
    tryAcquire(options: { waitTime: number }): Promise<Held | null>;
  },
): KindUnderTest => ({
  kind,
  take: async (redisson, name, waitTime) => {
    await of(redisson, name).trySetPermits(1);
    return of(redisson, name).tryAcquire({ waitTime });
  },
  occupy: async (holder, name) => {
    await of(holder, name).trySetPermits(1);
    const held = (await of(holder, name).tryAcquire({ waitTime: 5_000 }))!;
    return () => held.release();
  },
  wakes: true,
  holds: true,
});

const KINDS: readonly KindUnderTest[] = [
  lockUnderTest('lock', (r, name) => r.getLock(name)),
  lockUnderTest('fair-lock', (r, name) => r.getFairLock(name)),
  lockUnderTest('non-reentrant-fair-lock', (r, name) => r.getNonReentrantFairLock(name)),
  lockUnderTest('write-lock', (r, name) => r.getReadWriteLock(name).writeLock()),
  {
    ...lockUnderTest('read-lock', (r, name) => r.getReadWriteLock(name).readLock()),
    occupy: async (holder, name) => {
      const held = await holder.getReadWriteLock(name).writeLock().acquire();
      return () => held.release();
    },
  },
  lockUnderTest('spin-lock', (r, name) => r.getSpinLock(name), false),
  lockUnderTest('fenced-lock', (r, name) => r.getFencedLock(name)),
  lockUnderTest('non-reentrant-lock', (r, name) => r.getNonReentrantLock(name)),
  semaphoreUnderTest('semaphore', (r, name) => r.getSemaphore(name)),
  semaphoreUnderTest('permit-expirable-semaphore', (r, name) => r.getPermitExpirableSemaphore(name)),
  {
    kind: 'count-down-latch',
    take: async (redisson, name, waitTime) =>
      (await redisson.getCountDownLatch(name).await({ waitTime })) ? { release: () => Promise.resolve() } : null,
    occupy: async (holder, name) => {
      await holder.getCountDownLatch(name).trySetCount(1);
      return () => holder.getCountDownLatch(name).countDown();
    },
    wakes: true,
    holds: false,
  },
  {
    // Taken in name order: `:a`, then `:b`, which the holder keeps.
    kind: 'multi-lock',
    take: (redisson, name, waitTime) =>
      redisson.getMultiLock(redisson.getLock(`${name}:a`), redisson.getLock(`${name}:b`)).tryAcquire({ waitTime }),
    occupy: async (holder, name) => {
      const held = await holder.getLock(`${name}:b`).acquire();
      return () => held.release();
    },
    wakes: false,
    holds: true,
  },
  {
    // The holder keeps two of the three members: no majority is left for anyone else.
    kind: 'red-lock',
    take: (redisson, name, waitTime) =>
      redisson
        .getRedLock(redisson.getLock(`${name}:1`), redisson.getLock(`${name}:2`), redisson.getLock(`${name}:3`))
        .tryAcquire({ waitTime }),
    occupy: async (holder, name) => {
      const held = await holder.getMultiLock(holder.getLock(`${name}:2`), holder.getLock(`${name}:3`)).acquire();
      return () => held.release();
    },
    wakes: false,
    holds: true,
  },
];

/** The events of `type` and `kind` recorded so far (a composite's members emit their own, of kind `lock`). */
const ofKind = <T extends { kind: string }>(events: readonly T[], kind: string): T[] =>
  events.filter((event) => event.kind === kind);

describe.each(KINDS)('metrics: $kind emits the events every kind does', (entry) => {
  const { kind } = entry;

  it('free: one attempt, no wake-up; its release is full and says how long it was held', async () => {
    const redisson = client();
    const acquired = record(redisson, 'acquired');
    const released = record(redisson, 'released');
    const held = (await entry.take(redisson, `m:${kind}:free`, 5_000))!;
    expect(held).not.toBeNull();
    expect(ofKind(acquired, kind)).toEqual([expect.objectContaining({ kind, attempts: 1, wakeUps: 0 })]);
    expect(ofKind(acquired, kind)[0]!.name).toContain(`m:${kind}:free`);
    await delay(60);
    await held.release();
    if (!entry.holds) return expect(released).toEqual([]);
    expect(ofKind(released, kind)).toEqual([expect.objectContaining({ kind, fully: true })]);
    expect(ofKind(released, kind)[0]!.heldMs).toBeGreaterThanOrEqual(50);
  });

  it('woken: its wait, its attempts and the release message that woke it', async () => {
    const holder = client();
    const waiter = client();
    const acquired = record(waiter, 'acquired');
    const name = `m:${kind}:busy`;
    const free = await entry.occupy(holder, name);
    const waiting = entry.take(waiter, name, 20_000);
    // A spin lock's waiter re-checks on its back-off: it never parks on a channel.
    if (kind === 'spin-lock') await delay(300);
    else await eventually(() => waiter.diagnostics().waiters >= 1, 10_000, 'a parked waiter');
    await delay(100);
    await free();
    const held = await waiting;
    expect(held).not.toBeNull();
    await held!.release();
    const [event, ...more] = ofKind(acquired, kind);
    expect(more).toEqual([]);
    expect(event!.waitMs).toBeGreaterThanOrEqual(100);
    if (entry.wakes) {
      expect(event!.wakeUps).toBe(1);
      expect(event!.attempts).toBeGreaterThanOrEqual(2); // refused, then (after subscribing) woken
    } else {
      expect(event!.wakeUps).toBe(0);
      expect(event!.attempts).toBeGreaterThanOrEqual(1); // a spin lock's re-checks; a composite's rounds
    }
  });

  it("timeout: acquireFailed with reason 'timeout' and the wait's figures", async () => {
    const holder = client();
    const waiter = client();
    const failed = record(waiter, 'acquireFailed');
    const acquired = record(waiter, 'acquired');
    const name = `m:${kind}:taken`;
    const free = await entry.occupy(holder, name);
    expect(await entry.take(waiter, name, 80)).toBeNull();
    await free();
    expect(ofKind(acquired, kind)).toEqual([]);
    const [event, ...more] = ofKind(failed, kind);
    expect(more).toEqual([]);
    expect(event).toMatchObject({ kind, reason: 'timeout', wakeUps: 0 });
    expect(event!.attempts).toBeGreaterThanOrEqual(1);
    expect(event!.waitMs).toBeGreaterThanOrEqual(70);
  });
});

describe('metrics: a lost hold of any kind', () => {
  it('emits holdLost with its kind, and the deprecated lockLost with the same event', async () => {
    const redisson = client({ lockWatchdogTimeout: 600 });
    const lost = record(redisson, 'holdLost');
    const legacy = record(redisson, 'lockLost');
    const lock = await redisson.getFairLock('m:lost:lock').acquire();
    const semaphore = redisson.getPermitExpirableSemaphore('m:lost:permits');
    await semaphore.trySetPermits(1);
    const permit = await semaphore.acquire({ watchdog: true });
    const multi = await redisson.getMultiLock(redisson.getLock('m:lost:a'), redisson.getLock('m:lost:b')).acquire();
    await admin().del('m:lost:lock', permitTimeoutKey('m:lost:permits'), 'm:lost:b');
    await eventually(
      () => lock.signal.aborted && permit.signal.aborted && multi.signal.aborted,
      5_000,
      'the renewal round to find them gone',
    );
    const seen = lost.map(({ kind, name }) => `${kind} ${name}`).sort();
    expect(seen).toEqual([
      'fair-lock m:lost:lock',
      'lock m:lost:b',
      'multi-lock MultiLock(m:lost:a, m:lost:b)',
      'permit-expirable-semaphore m:lost:permits',
    ]);
    expect(lost.every((event) => event.error instanceof LockLostError)).toBe(true);
    expect(lost.find((event) => event.kind === 'permit-expirable-semaphore')!.owner).toBe(permit.permitIds.join(','));
    expect(legacy).toEqual(lost);
    await multi.release().catch(() => undefined);
  });
});
