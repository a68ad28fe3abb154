import { BetaRefusals, reportBetaRefusals } from './beta-refusals';

describe('BetaRefusals', () => {
  const strict = { healthKey: 'k', label: 'strict', engine: { dialect: 'anthropic' as const } };

  it('forgets a refusal after its time, and keeps targets apart', () => {
    let now = 0;
    const memory = new BetaRefusals(undefined, 1_000, () => now);
    memory.remember(strict, ['a'], undefined, true);
    expect(memory.sending(strict, 'a,b', {})?.values).toEqual(['b']);
    expect(memory.sending({ ...strict, healthKey: 'other' }, 'a,b', {})?.values).toEqual(['a', 'b']);
    now = 1_000;
    expect(memory.sending(strict, 'a,b', {})?.values).toEqual(['a', 'b']);
  });

  it('holds at most 64 values per target, the oldest forgotten first', () => {
    const memory = new BetaRefusals();
    const values = Array.from({ length: 70 }, (_, i) => `v${i}`);
    memory.remember(strict, values, undefined, true);
    expect(memory.sending(strict, values.join(','), {})?.values).toEqual(values.slice(0, 6));
  });
});

describe('reportBetaRefusals', () => {
  it('counts and logs a refusal with the request, the target and the values; a value left out is only counted', () => {
    const counted: unknown[] = [];
    const logged: unknown[] = [];
    const observer = reportBetaRefusals(
      { betaValues: (target, kind, count) => counted.push([target.label, kind, count]) },
      { warn: ((fields: unknown, message: string) => logged.push([fields, message])) as never },
    );
    const target = { healthKey: 'byo:usr_1:vertex', label: 'byo:vertex', engine: { dialect: 'anthropic' as const } };
    observer.refused(target, ['claude-code-20250219'], 'req_1', true);
    observer.leftOut(target, 2);
    expect(counted).toEqual([
      ['byo:vertex', 'refused', 1],
      ['byo:vertex', 'left_out', 2],
    ]);
    expect(logged).toEqual([
      [
        { requestId: 'req_1', target: 'byo:vertex', betas: ['claude-code-20250219'], resent: true },
        expect.stringContaining('call re-sent without them'),
      ],
    ]);
  });
});
