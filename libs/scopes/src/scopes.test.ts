import { effectiveScopes, LEGACY_SCOPES, missingScopes, PRESETS, presetScopes, SCOPES } from './scopes';

describe('effective scopes', () => {
  it('a key without a stored list acts with the legacy set', () => {
    expect(effectiveScopes(null, { teamKey: false, operator: true })).toEqual([...LEGACY_SCOPES]);
    expect(effectiveScopes(undefined, { teamKey: false, operator: true })).toEqual([...LEGACY_SCOPES]);
  });

  it('an empty stored list means no scopes, not the legacy set', () => {
    expect(effectiveScopes([], { teamKey: false, operator: true })).toEqual([]);
  });

  it('a team key never holds keys:write, teams:write, devices:write or builds:admin', () => {
    const scopes = effectiveScopes([...SCOPES], { teamKey: true, operator: true });
    expect(scopes).not.toEqual(expect.arrayContaining(['keys:write']));
    for (const excluded of ['keys:write', 'teams:write', 'devices:write', 'builds:admin'])
      expect(scopes).not.toContain(excluded);
    expect(scopes).toContain('gateway:invoke');
  });

  it('drops unknown strings and duplicates and keeps the enumeration order', () => {
    expect(
      effectiveScopes(['usage:read', 'nope', 'gateway:invoke', 'usage:read'], { teamKey: false, operator: true }),
    ).toEqual(['gateway:invoke', 'usage:read']);
  });
});

describe('presets', () => {
  it('Gateway calls models only; Read-only holds every :read scope; Full access holds all', () => {
    expect(PRESETS.gateway).toEqual(['gateway:invoke']);
    expect(PRESETS.read_only.every((scope) => scope.endsWith(':read'))).toBe(true);
    expect(PRESETS.read_only).toHaveLength(SCOPES.filter((s) => s.endsWith(':read')).length);
    expect(PRESETS.full_access).toEqual([...SCOPES]);
  });
});

describe('operator scopes', () => {
  it('a non-operator never holds builds:admin, whatever is stored; an operator holds what is stored', () => {
    expect(effectiveScopes([...SCOPES], { teamKey: false, operator: false })).toEqual(
      SCOPES.filter((scope) => scope !== 'builds:admin'),
    );
    expect(effectiveScopes(['builds:admin'], { teamKey: false, operator: false })).toEqual([]);
    expect(effectiveScopes([...SCOPES], { teamKey: false, operator: true })).toEqual([...SCOPES]);
  });

  it("a non-operator's Full access preset is every scope but builds:admin", () => {
    expect(presetScopes('full_access', { operator: false })).toEqual(
      SCOPES.filter((scope) => scope !== 'builds:admin'),
    );
    expect(presetScopes('full_access', { operator: true })).toEqual([...SCOPES]);
    expect(presetScopes('gateway', { operator: false })).toEqual(['gateway:invoke']);
  });
});

describe('missing scopes', () => {
  it('lists exactly the required scopes the holder lacks', () => {
    expect(missingScopes(['keys:read'], ['keys:read', 'keys:write'])).toEqual(['keys:write']);
    expect(missingScopes(['keys:read'], [])).toEqual([]);
  });
});
