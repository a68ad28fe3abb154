import { derivePots, type GrantEntry } from './pots';

const usage = (entries: Record<string, number>) => new Map(Object.entries(entries));

describe('credit pots, derived from grants and monthly usage', () => {
  const freeNovember: GrantEntry[] = [{ pot: 'beta', credits: 10_000, period: '2026-11' }];

  it('plan credits are spent first, then the beta pot, then permanent credits, then overage', () => {
    const grants: GrantEntry[] = [
      { pot: 'plan', credits: 20_000, period: '2026-11' },
      { pot: 'beta', credits: 10_000, period: '2026-11' },
      { pot: 'permanent', credits: 5_000, period: '2026-10' },
    ];
    const at = (used: number) =>
      derivePots({ grants, usageByPeriod: usage({ '2026-11': used }), period: '2026-11', overageLimit: 1_000 });
    expect(at(15_000).current).toMatchObject({
      plan: { used: 15_000, remaining: 5_000 },
      beta: { used: 0 },
      permanent: { used: 0, remaining: 5_000 },
    });
    expect(at(25_000).current).toMatchObject({
      plan: { remaining: 0 },
      beta: { used: 5_000, remaining: 5_000 },
      permanent: { used: 0 },
    });
    expect(at(33_000).current).toMatchObject({
      beta: { remaining: 0 },
      permanent: { used: 3_000, remaining: 2_000 },
      overage: { used: 0 },
    });
    const over = at(35_400);
    expect(over.current).toMatchObject({
      permanent: { remaining: 0 },
      overage: { used: 400, limit: 1_000, remaining: 600 },
    });
    expect(over).toMatchObject({ balance: 0, available: 600 });
  });

  it('plan and beta credits do not roll over; permanent credits carry into the next month', () => {
    const grants: GrantEntry[] = [
      ...freeNovember,
      { pot: 'permanent', credits: 20_000, period: '2026-11' },
      { pot: 'beta', credits: 10_000, period: '2026-12' },
    ];
    const december = derivePots({
      grants,
      usageByPeriod: usage({ '2026-11': 12_000, '2026-12': 1_000 }),
      period: '2026-12',
      overageLimit: 0,
    });
    // November: 10,000 from beta, 2,000 from the pack. December: a fresh beta pot; the pack keeps 18,000.
    expect(december.current).toMatchObject({
      beta: { granted: 10_000, used: 1_000 },
      permanent: { granted: 18_000, used: 0, remaining: 18_000 },
    });
    expect(december.balance).toBe(27_000);
  });

  it('the same usage gives the same pots whatever order its months are listed in', () => {
    const a = derivePots({
      grants: freeNovember,
      usageByPeriod: usage({ '2026-10': 50, '2026-11': 70 }),
      period: '2026-11',
      overageLimit: 0,
    });
    const b = derivePots({
      grants: freeNovember,
      usageByPeriod: usage({ '2026-11': 70, '2026-10': 50 }),
      period: '2026-11',
      overageLimit: 0,
    });
    expect(a).toEqual(b);
    expect(a.balance).toBe(9_930);
  });

  it('a negative grant lowers the balance, and nothing is available below zero', () => {
    const grants: GrantEntry[] = [...freeNovember, { pot: 'permanent', credits: -9_999, period: '2026-11' }];
    expect(derivePots({ grants, usageByPeriod: usage({}), period: '2026-11', overageLimit: 0 })).toMatchObject({
      balance: 1,
      available: 1,
    });
    expect(
      derivePots({ grants, usageByPeriod: usage({ '2026-11': 3 }), period: '2026-11', overageLimit: 0 }),
    ).toMatchObject({ balance: -2, available: 0 });
  });
});
