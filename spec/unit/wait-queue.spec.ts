import { WaitQueue } from '../../lib/pubsub/wait-queue';

describe('WaitQueue', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('wakes parked waiters one at a time, oldest first', async () => {
    const queue = new WaitQueue();
    const woken: number[] = [];
    const waits = [1, 2, 3].map((n) => queue.wait(1_000).then((ok) => ok && woken.push(n)));
    queue.wake(1, 1);
    await Promise.resolve();
    queue.wake(1, 1);
    await Promise.resolve();
    expect(woken).toEqual([1, 2]);
    expect(queue.size).toBe(1);
    queue.wake(Infinity, 0);
    await Promise.all(waits);
    expect(woken).toEqual([1, 2, 3]);
    expect(queue.size).toBe(0);
  });

  it('resolves false when the time limit passes, and clears its timer when woken', async () => {
    const queue = new WaitQueue();
    const timedOut = queue.wait(100);
    jest.advanceTimersByTime(100);
    await expect(timedOut).resolves.toBe(false);
    const woken = queue.wait(100);
    queue.wake(1, 1);
    await expect(woken).resolves.toBe(true);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('keeps a wake-up that finds nobody parked as a permit, up to the cap', async () => {
    const queue = new WaitQueue();
    queue.wake(1, 2);
    queue.wake(1, 2);
    queue.wake(1, 2);
    await expect(queue.wait(1_000)).resolves.toBe(true);
    await expect(queue.wait(1_000)).resolves.toBe(true);
    const third = queue.wait(1_000);
    expect(queue.size).toBe(1);
    jest.advanceTimersByTime(1_000);
    await expect(third).resolves.toBe(false);
  });

  it('never drops kept permits when a wake-up may keep none', async () => {
    const queue = new WaitQueue();
    queue.wake(1, 2);
    queue.wake(1, 0);
    await expect(queue.wait(1_000)).resolves.toBe(true);
  });

  it('rejects with the abort reason and removes the waiter and its timer', async () => {
    const queue = new WaitQueue();
    const controller = new AbortController();
    const waiting = queue.wait(10_000, controller.signal);
    controller.abort(new Error('no more'));
    await expect(waiting).rejects.toThrow('no more');
    expect(queue.size).toBe(0);
    expect(jest.getTimerCount()).toBe(0);
    await expect(queue.wait(10, controller.signal)).rejects.toThrow('no more');
  });

  it('waits without a timer when the limit is infinite, and rejects everyone on close', async () => {
    const queue = new WaitQueue();
    const waiting = queue.wait(Infinity);
    expect(jest.getTimerCount()).toBe(0);
    queue.close(new Error('closed'));
    await expect(waiting).rejects.toThrow('closed');
    await expect(queue.wait(10)).rejects.toThrow('closed');
  });
});
