import { TtlRecheck } from '../../lib/kernel/pubsub/recheck';
import { WaitQueue, type AttemptReport, type Waiter } from '../../lib/kernel/pubsub/wait-queue';
import { TimerQueue } from '../../lib/kernel/timer-queue';

/** A parked waiter that records its re-checks, on the fake clock, and keeps their reports. */
class Parked implements Waiter {
  prevLinked: Waiter | undefined;
  nextLinked: Waiter | undefined;
  readonly rechecks: number[] = [];
  report: AttemptReport | undefined;
  wake(): void {
    throw new Error('no message in these tests');
  }
  recheck(report: AttemptReport): void {
    this.rechecks.push(Date.now());
    this.report = report;
  }
  close(): void {}
}

describe('TtlRecheck', () => {
  let queue: WaitQueue;
  let recheck: TtlRecheck;
  let timers: TimerQueue;
  const parked = (count: number): Parked[] =>
    Array.from({ length: count }, () => {
      const waiter = new Parked();
      expect(queue.park(waiter)).toBe(true);
      return waiter;
    });

  beforeEach(() => {
    jest.useFakeTimers({ now: 0 });
    timers = new TimerQueue(() => Date.now());
    queue = new WaitQueue();
    recheck = new TtlRecheck(queue, timers);
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('wakes the oldest parked waiter alone when the latest reading runs out', () => {
    const [first, second, third] = parked(3);
    recheck.read(300);
    recheck.read(500); // the holder's lease was renewed meanwhile: the latest reading counts
    jest.advanceTimersByTime(499);
    expect(first!.rechecks).toEqual([]);
    jest.advanceTimersByTime(1);
    expect([first!.rechecks, second!.rechecks, third!.rechecks]).toEqual([[500], [], []]);
    expect(queue.size).toBe(2);
  });

  it('passes the re-check on while each re-checking waiter acquires, and stops at the first refused', () => {
    const [first, second, third] = parked(3);
    recheck.read(100);
    jest.advanceTimersByTime(100);
    first!.report!.attempted(true); // the lease ran out: the first took the lock (or a share of it)
    expect(second!.rechecks).toEqual([100]);
    second!.report!.attempted(false); // refused: it parks again with the new holder's time
    expect(third!.rechecks).toEqual([]);
    expect(timers.size).toBe(0);
  });

  it('re-checks nothing while the holder has no expiry, or once nobody waits', () => {
    const [waiter] = parked(1);
    recheck.read(100);
    recheck.read(-1);
    jest.advanceTimersByTime(1_000);
    recheck.read(100);
    recheck.stop();
    jest.advanceTimersByTime(1_000);
    expect(waiter!.rechecks).toEqual([]);
    expect(jest.getTimerCount()).toBe(0);
  });
});
