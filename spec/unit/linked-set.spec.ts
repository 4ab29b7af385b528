import { LinkedSet, type Linked } from '../../lib/kernel/linked-set';

class Item implements Linked<Item> {
  prevLinked: Item | undefined;
  nextLinked: Item | undefined;
  constructor(readonly id: number) {}
}

const ids = (set: LinkedSet<Item>) => [...set].map((item) => item.id);

describe('LinkedSet', () => {
  it('keeps members in insertion order, once each, and counts them', () => {
    const set = new LinkedSet<Item>();
    const [a, b, c] = [new Item(1), new Item(2), new Item(3)];
    set.add(a);
    set.add(b);
    set.add(c);
    set.add(b); // a member already: nothing changes
    expect(ids(set)).toEqual([1, 2, 3]);
    expect(set.size).toBe(3);
    expect([a, b, c].map((item) => set.has(item))).toEqual([true, true, true]);
  });

  it('deletes the first, a middle and the last member, and tells whether it was one', () => {
    const items = [1, 2, 3, 4, 5].map((id) => new Item(id));
    const set = new LinkedSet<Item>();
    for (const item of items) set.add(item);
    expect(set.delete(items[2]!)).toBe(true);
    expect(set.delete(items[0]!)).toBe(true);
    expect(set.delete(items[4]!)).toBe(true);
    expect(set.delete(items[4]!)).toBe(false);
    expect(ids(set)).toEqual([2, 4]);
    expect(set.size).toBe(2);
    expect(set.has(items[0]!)).toBe(false);
    set.add(items[0]!); // back, at the end
    expect(ids(set)).toEqual([2, 4, 1]);
  });

  it('lets the member being visited be deleted while iterating', () => {
    const items = [1, 2, 3, 4].map((id) => new Item(id));
    const set = new LinkedSet<Item>();
    for (const item of items) set.add(item);
    const seen: number[] = [];
    for (const item of set) {
      seen.push(item.id);
      if (item.id % 2 === 0) set.delete(item);
    }
    expect(seen).toEqual([1, 2, 3, 4]);
    expect(ids(set)).toEqual([1, 3]);
  });

  it('empties completely and fills again', () => {
    const set = new LinkedSet<Item>();
    const item = new Item(7);
    for (let i = 0; i < 3; i++) {
      set.add(item);
      expect(ids(set)).toEqual([7]);
      set.delete(item);
      expect(ids(set)).toEqual([]);
      expect(set.size).toBe(0);
    }
  });
});
