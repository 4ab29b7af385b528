import { WaitQueue, type Waiter } from '../../lib/kernel/pubsub/wait-queue';

/** A waiter that records what happened to it. */
function waiter(log: string[], id: string): Waiter {
  return {
    prevLinked: undefined,
    nextLinked: undefined,
    wake: () => log.push(`${id} woken`),
    recheck: () => log.push(`${id} re-checked`),
    close: (error) => log.push(`${id} closed: ${error.message}`),
  };
}

describe('WaitQueue', () => {
  it('wakes parked waiters one at a time, oldest first', () => {
    const queue = new WaitQueue();
    const log: string[] = [];
    for (const id of ['a', 'b', 'c']) expect(queue.park(waiter(log, id))).toBe(true);
    queue.wake(1, 1);
    queue.wake(1, 1);
    expect(log).toEqual(['a woken', 'b woken']);
    expect(queue.size).toBe(1);
    queue.wake(Infinity, 0);
    expect(log).toEqual(['a woken', 'b woken', 'c woken']);
    expect(queue.size).toBe(0);
  });

  it('lets a waiter leave without waking it, and skips it afterwards', () => {
    const queue = new WaitQueue();
    const log: string[] = [];
    const a = waiter(log, 'a');
    queue.park(a);
    queue.park(waiter(log, 'b'));
    queue.leave(a);
    queue.wake(1, 0);
    expect(log).toEqual(['b woken']);
    expect(queue.size).toBe(0);
  });

  it('takes the oldest parked waiter out without waking it', () => {
    const queue = new WaitQueue();
    const log: string[] = [];
    const a = waiter(log, 'a');
    queue.park(a);
    queue.park(waiter(log, 'b'));
    expect(queue.shift()).toBe(a);
    expect(queue.size).toBe(1);
    expect(log).toEqual([]);
    queue.wake(1, 0);
    expect(log).toEqual(['b woken']);
    expect(queue.shift()).toBeUndefined();
  });

  it('offers a gift to the oldest parked waiter only: claimed, it leaves the queue; declined, nobody younger is asked', () => {
    const queue = new WaitQueue();
    const log: string[] = [];
    /** A waiter that claims a gift of at least `wants` (and records it). */
    const claimer = (id: string, wants: number): Waiter => ({
      ...waiter(log, id),
      claim: (gift) => {
        const fits = typeof gift === 'number' && gift >= wants;
        if (fits) log.push(`${id} claimed ${gift}`);
        return fits;
      },
    });
    queue.park(claimer('a', 2));
    queue.park(claimer('b', 1));
    expect(queue.offer(1)).toBe(false);
    expect(queue.size).toBe(2);
    expect(queue.offer(2)).toBe(true);
    expect(queue.size).toBe(1);
    expect(queue.offer(1)).toBe(true);
    expect(queue.offer(1)).toBe(false);
    expect(log).toEqual(['a claimed 2', 'a woken', 'b claimed 1', 'b woken']); // a claim wakes its waiter
    // A waiter without `claim` never claims anything.
    queue.park(waiter(log, 'c'));
    expect(queue.offer(5)).toBe(false);
    expect(queue.size).toBe(1);
  });

  it('keeps a wake-up that finds nobody parked as a permit, up to the cap', () => {
    const queue = new WaitQueue();
    const log: string[] = [];
    queue.wake(1, 2);
    queue.wake(1, 2);
    queue.wake(1, 2);
    expect(queue.park(waiter(log, 'a'))).toBe(false);
    expect(queue.park(waiter(log, 'b'))).toBe(false);
    expect(queue.park(waiter(log, 'c'))).toBe(true);
    expect(queue.size).toBe(1);
    expect(log).toEqual([]);
  });

  it('never drops kept permits when a wake-up may keep none', () => {
    const queue = new WaitQueue();
    queue.wake(1, 2);
    queue.wake(1, 0);
    expect(queue.park(waiter([], 'a'))).toBe(false);
  });

  it('closes every parked waiter, and refuses to park afterwards', () => {
    const queue = new WaitQueue();
    const log: string[] = [];
    queue.park(waiter(log, 'a'));
    queue.park(waiter(log, 'b'));
    queue.close(new Error('shut'));
    expect(log).toEqual(['a closed: shut', 'b closed: shut']);
    expect(queue.size).toBe(0);
    expect(() => queue.park(waiter(log, 'c'))).toThrow('shut');
  });

  it('closes every parked waiter even when one passes its wake-up on as it closes', () => {
    const queue = new WaitQueue();
    const log: string[] = [];
    // An acquisition closed gives its share back, which passes a wake-up on (as one giving up does).
    const passing = (id: string): Waiter => ({
      ...waiter(log, id),
      close: () => (log.push(`${id} closed`), queue.wake(1, 0)),
    });
    queue.park(passing('a'));
    queue.park(passing('b'));
    queue.close(new Error('shut'));
    expect(log).toEqual(['a closed', 'b closed']);
  });
});
