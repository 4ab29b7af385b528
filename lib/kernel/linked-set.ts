/** The links an item of a {@link LinkedSet} carries; an item belongs to one such set at a time. */
export interface Linked<T> {
  /** @internal The set's. */
  prevLinked: T | undefined;
  /** @internal The set's. */
  nextLinked: T | undefined;
}

/**
 * A set of objects kept as a list threaded through the objects themselves: adding and deleting
 * allocate nothing. For the hot path's sets whose members come and go every operation (acquisitions
 * under way, tracked leases, pending release bounds): a `Set` with that churn rehashes its backing
 * store every few operations, and the store, held by a long-lived set, outlives a young-generation
 * collection, which makes old-generation garbage of it. Iterates in insertion order; deleting the
 * current member while iterating is allowed.
 */
export class LinkedSet<T extends Linked<T>> implements Iterable<T> {
  private head: T | undefined;
  private last: T | undefined;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** The oldest member. */
  get first(): T | undefined {
    return this.head;
  }

  has(item: T): boolean {
    return item.prevLinked !== undefined || this.head === item;
  }

  add(item: T): void {
    if (this.has(item)) return;
    item.prevLinked = this.last;
    item.nextLinked = undefined;
    if (this.last) this.last.nextLinked = item;
    else this.head = item;
    this.last = item;
    this.count += 1;
  }

  /** Removes `item`; returns whether it was a member. */
  delete(item: T): boolean {
    if (!this.has(item)) return false;
    const { prevLinked, nextLinked } = item;
    if (prevLinked) prevLinked.nextLinked = nextLinked;
    else this.head = nextLinked;
    if (nextLinked) nextLinked.prevLinked = prevLinked;
    else this.last = prevLinked;
    item.prevLinked = undefined;
    item.nextLinked = undefined;
    this.count -= 1;
    return true;
  }

  *[Symbol.iterator](): Iterator<T> {
    let item = this.head;
    while (item) {
      const next: T | undefined = item.nextLinked;
      yield item;
      item = next;
    }
  }
}
