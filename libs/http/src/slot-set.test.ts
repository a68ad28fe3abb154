import { SlotSet } from './slot-set';

const members = <T>(set: SlotSet<T>): T[] => {
  const seen: T[] = [];
  set.forEach((member) => seen.push(member));
  return seen;
};

describe('SlotSet', () => {
  it('holds what was added until its removal, and a removal twice removes once', () => {
    const set = new SlotSet<string>();
    const removeA = set.add('a');
    set.add('b');
    const removeA2 = set.add('a');
    removeA();
    removeA();
    expect(members(set)).toEqual(['b', 'a']);
    removeA2();
    expect(members(set)).toEqual(['b']);
  });

  it('reuses a freed slot rather than growing, and a stale removal cannot remove the new member', () => {
    const set = new SlotSet<number>();
    const removes = [1, 2, 3].map((n) => set.add(n));
    removes[1]!();
    set.add(4);
    expect(members(set)).toEqual([1, 4, 3]);
    removes[1]!();
    expect(members(set)).toEqual([1, 4, 3]);
  });

  it('skips a member removed during a walk before the walk reached it', () => {
    const set = new SlotSet<string>();
    let removeB = () => undefined as void;
    set.add('a');
    removeB = set.add('b');
    const seen: string[] = [];
    set.forEach((member) => {
      seen.push(member);
      if (member === 'a') removeB();
    });
    expect(seen).toEqual(['a']);
  });

  it('holds the members of the moment however many came and went', () => {
    const set = new SlotSet<object>();
    const held: Array<() => void> = [];
    for (let i = 0; i < 10_000; i++) {
      held.push(set.add({}));
      if (held.length > 10) held.shift()!();
    }
    expect(members(set)).toHaveLength(10);
  });
});
