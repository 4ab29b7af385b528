import { TimerQueue, type Timed } from '../../lib/kernel/timer-queue';

/** A queue item that records when it is called back, on the fake clock. */
class Item implements Timed {
  dueAt = 0;
  queueIndex = -1;
  readonly calls: number[] = [];
  constructor(
    readonly id: number,
    private readonly fired: Item[],
    private readonly onTimeUp: () => void = () => undefined,
  ) {}
  timeUp(): void {
    this.calls.push(Date.now());
    this.fired.push(this);
    this.onTimeUp();
  }
}

describe('TimerQueue', () => {
  let queue: TimerQueue;
  let fired: Item[];
  const item = (id: number, onTimeUp?: () => void) => new Item(id, fired, onTimeUp);

  beforeEach(() => {
    jest.useFakeTimers({ now: 1_000 });
    queue = new TimerQueue(() => Date.now());
    fired = [];
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('calls each item back once, when due and in due order, on one Node timer', () => {
    const items = [30, 10, 20, 10].map((ms, id) => {
      const entry = item(id);
      queue.schedule(entry, ms);
      return entry;
    });
    expect(jest.getTimerCount()).toBe(1);
    jest.advanceTimersByTime(9);
    expect(fired).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(fired.map((entry) => entry.id)).toEqual([1, 3]);
    jest.advanceTimersByTime(100);
    expect(fired.map((entry) => entry.id)).toEqual([1, 3, 2, 0]);
    expect(items.map((entry) => entry.calls)).toEqual([[1_030], [1_010], [1_020], [1_010]]);
    expect(queue.size).toBe(0);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('forgets a cancelled item, and clears the Node timer with the last one', () => {
    const a = item(1);
    const b = item(2);
    queue.schedule(a, 10);
    queue.schedule(b, 20);
    queue.cancel(a);
    queue.cancel(a); // twice: no effect
    jest.advanceTimersByTime(15);
    expect(fired).toEqual([]);
    queue.cancel(b);
    expect(jest.getTimerCount()).toBe(0);
    jest.advanceTimersByTime(100);
    expect(fired).toEqual([]);
  });

  it('sets its Node timer once while one item is queued again for later, over and over', () => {
    const a = item(1);
    const set = jest.spyOn(global, 'setTimeout');
    for (let i = 0; i < 100; i++) queue.schedule(a, 50 + i);
    expect(set).toHaveBeenCalledTimes(1);
    jest.advanceTimersByTime(50); // the Node timer fires early: it is set once more, for the item
    expect(a.calls).toEqual([]);
    expect(set).toHaveBeenCalledTimes(2);
    jest.advanceTimersByTime(99);
    expect(a.calls).toEqual([1_149]);
    set.mockRestore();
  });

  it('moves an item scheduled again, earlier or later', () => {
    const a = item(1);
    const b = item(2);
    queue.schedule(a, 50);
    queue.schedule(b, 40);
    queue.schedule(a, 10);
    queue.schedule(b, 60);
    jest.advanceTimersByTime(10);
    expect(fired.map((entry) => entry.calls)).toEqual([[1_010]]);
    jest.advanceTimersByTime(49);
    expect(fired).toHaveLength(1);
    jest.advanceTimersByTime(1);
    expect(b.calls).toEqual([1_060]);
  });

  it('takes an item out for an infinite time, and gives a 0 ms item a turn of its own', () => {
    const a = item(1);
    queue.schedule(a, 10);
    queue.schedule(a, Infinity);
    expect(queue.size).toBe(0);
    const b = item(2);
    queue.schedule(b, 0);
    jest.advanceTimersByTime(0);
    expect(fired).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(fired).toEqual([b]);
  });

  it('leaves what a callback queues for a later turn, and skips what it cancels', () => {
    const later = item(3);
    const cancelled = item(2);
    const first = item(1, () => {
      queue.schedule(later, 0);
      queue.cancel(cancelled);
    });
    queue.schedule(first, 10);
    queue.schedule(cancelled, 10);
    jest.advanceTimersByTime(10);
    expect(fired).toEqual([first]);
    jest.advanceTimersByTime(1);
    expect(fired).toEqual([first, later]);
    expect(cancelled.calls).toEqual([]);
  });

  it('keeps due order through many schedules and cancels', () => {
    let seed = 7;
    const random = () => (seed = (seed * 16_807) % 2_147_483_647) / 2_147_483_647;
    const items = Array.from({ length: 500 }, (_, id) => item(id));
    for (const entry of items) queue.schedule(entry, 1 + Math.floor(random() * 1_000));
    const cancelled = new Set(items.filter(() => random() < 0.3));
    for (const entry of cancelled) queue.cancel(entry);
    for (const entry of items.filter(() => random() < 0.2))
      if (!cancelled.has(entry)) queue.schedule(entry, 1 + Math.floor(random() * 1_000));
    jest.advanceTimersByTime(2_000);
    expect(fired).toHaveLength(items.length - cancelled.size);
    const at = fired.map((entry) => entry.calls[0]!);
    expect(at).toEqual([...at].sort((x, y) => x - y));
    expect(fired.every((entry) => entry.calls.length === 1 && entry.calls[0] === entry.dueAt)).toBe(true);
  });
});
