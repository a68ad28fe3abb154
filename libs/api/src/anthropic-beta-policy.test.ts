import { betaPolicyIssues, isEmptyBetaPolicy, MAX_BETA_RULES } from './anthropic-beta-policy';

describe('betaPolicyIssues', () => {
  it('accepts an empty policy and one within bounds', () => {
    expect(betaPolicyIssues({})).toEqual([]);
    expect(betaPolicyIssues({ drop: ['*', 'claude-code-20250219'], map: { 'a-1': 'b-2' } })).toEqual([]);
    expect(isEmptyBetaPolicy({ drop: [], map: {} })).toBe(true);
    expect(isEmptyBetaPolicy({ drop: ['x'] })).toBe(false);
  });

  it('refuses values that are not header tokens, too long, too many, or both dropped and mapped', () => {
    const many = Array.from({ length: MAX_BETA_RULES + 1 }, (_, i) => `beta-${i}`);
    const issues = betaPolicyIssues({
      drop: ['has,comma', 'x'.repeat(129), 'both', ''],
      map: { 'ok-1': 'has space', both: 'y' },
    });
    expect(issues.map((issue) => issue.path.join('.'))).toEqual(['drop.0', 'drop.1', 'drop.2', 'drop.3', 'map.ok-1']);
    expect(betaPolicyIssues({ drop: many }).map((issue) => issue.path)).toEqual([['drop']]);
    const bigMap = Object.fromEntries(many.map((value) => [value, value]));
    expect(betaPolicyIssues({ map: bigMap }).map((issue) => issue.path)).toEqual([['map']]);
  });
});
