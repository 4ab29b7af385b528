import { MAX_TIME_MS } from '../options';

/**
 * Something a {@link TimerQueue} calls back. The queue keeps the item's place in its two fields, on
 * the item itself, so that queuing it allocates nothing.
 */
export interface Timed {
  /** When it is due (monotonic ms, whole), while queued; the queue's. */
  dueAt: number;
  /** Its place in the queue, -1 while not queued (its initial value); the queue's. */
  queueIndex: number;
  /** Called once it is due, after it left the queue. */
  timeUp(): void;
}

/**
 * Many timers on one Node timer: a binary heap of items by due time, the Node timer set for the
 * earliest. For waits, of which thousands may be pending at once: a queued item costs a slot in an
 * array, not a `Timeout` object with its arguments. As with `setTimeout`, an item is due 1 ms after
 * it is queued at the soonest, so an item queued while others fire waits for a later turn. Due times
 * are whole ms, rounded up: a fraction in an item's field would cost a heap number for every item of
 * its class (V8 then boxes that field in all of them). The Node timer is unref'd, and cleared with
 * the last item.
 */
export class TimerQueue {
  private readonly heap: Timed[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** When the Node timer fires (monotonic ms); `Infinity` without one. */
  private timerAt = Infinity;
  /** Due items are being called back: the Node timer is set once they are done. */
  private firing = false;
  private readonly onTimer = (): void => this.fireDue();

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Items queued. */
  get size(): number {
    return this.heap.length;
  }

  /**
   * Calls `item.timeUp()` once `ms` have passed (at least 1), instead of when it was due if it was
   * queued already; an infinite `ms` only takes it out. An item queued again for later keeps the
   * Node timer as it is (it fires early once, and is set for what is due then).
   */
  schedule(item: Timed, ms: number): void {
    if (!Number.isFinite(ms)) return this.cancel(item);
    const dueAt = Math.ceil(this.now() + Math.max(ms, 1));
    const index = item.queueIndex;
    if (index < 0) {
      item.queueIndex = this.heap.length;
      this.heap.push(item);
    }
    const earlier = index < 0 || dueAt < item.dueAt;
    item.dueAt = dueAt;
    if (earlier) this.siftUp(item.queueIndex);
    else this.siftDown(item.queueIndex);
    if (!this.firing && dueAt < this.timerAt) this.armTimer();
  }

  /** Schedules `item` at the `dueAt` it carries (see {@link schedule}). */
  arm(item: Timed): void {
    this.schedule(item, item.dueAt - this.now());
  }

  /** Takes `item` out, if queued: it is not called back. */
  cancel(item: Timed): void {
    const index = item.queueIndex;
    if (index < 0) return;
    item.queueIndex = -1;
    const last = this.heap.pop()!;
    if (last !== item) {
      this.heap[index] = last;
      last.queueIndex = index;
      if (index > 0 && last.dueAt < this.heap[parentOf(index)]!.dueAt) this.siftUp(index);
      else this.siftDown(index);
    }
    if (this.heap.length === 0 && this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.timerAt = Infinity;
    }
  }

  /** The Node timer fired: calls back every item due, oldest due first, then sets it for the next. */
  private fireDue(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = this.now();
    this.firing = true;
    try {
      while (this.heap.length > 0 && this.heap[0]!.dueAt <= now) {
        const item = this.heap[0]!;
        this.cancel(item);
        item.timeUp();
      }
    } finally {
      this.firing = false;
      if (this.heap.length > 0) this.armTimer();
    }
  }

  /** Sets the Node timer for the earliest item (a timer may fire before what it was set for is due: it is then set again). */
  private armTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    const at = this.heap[0]!.dueAt;
    this.timerAt = at;
    this.timer = setTimeout(this.onTimer, Math.min(Math.max(Math.ceil(at - this.now()), 1), MAX_TIME_MS));
    this.timer.unref();
  }

  private siftUp(index: number): void {
    const { heap } = this;
    const item = heap[index]!;
    while (index > 0) {
      const parent = parentOf(index);
      if (heap[parent]!.dueAt <= item.dueAt) break;
      this.place(heap[parent]!, index);
      index = parent;
    }
    this.place(item, index);
  }

  private siftDown(index: number): void {
    const { heap } = this;
    const item = heap[index]!;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && heap[right]!.dueAt < heap[left]!.dueAt ? right : left;
      if (item.dueAt <= heap[child]!.dueAt) break;
      this.place(heap[child]!, index);
      index = child;
    }
    this.place(item, index);
  }

  private place(item: Timed, index: number): void {
    this.heap[index] = item;
    item.queueIndex = index;
  }
}

function parentOf(index: number): number {
  return (index - 1) >> 1;
}
