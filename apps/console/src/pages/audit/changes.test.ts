import { changedFields } from './changes';

describe('changedFields', () => {
  it('lists only the fields an update changed, leaving out updated_at', () => {
    expect(
      changedFields(
        { id: 'key_1', name: 'ci', revoked_at: null, updated_at: 'a', scopes: ['usage:read'] },
        { id: 'key_1', name: 'ci', revoked_at: '2026-11-27T10:00:00.000Z', updated_at: 'b', scopes: ['usage:read'] },
      ),
    ).toEqual([{ field: 'revoked_at', before: 'null', after: '"2026-11-27T10:00:00.000Z"' }]);
  });

  it('lists every field of a creation or a deletion', () => {
    expect(changedFields(null, { id: 'org_1', name: 'Core' })).toEqual([
      { field: 'id', before: '—', after: '"org_1"' },
      { field: 'name', before: '—', after: '"Core"' },
    ]);
    expect(changedFields({ label: 'Laptop' }, null)).toEqual([{ field: 'label', before: '"Laptop"', after: '—' }]);
  });

  it('compares nested values by content', () => {
    expect(changedFields({ groups: ['a'] }, { groups: ['a'] })).toEqual([]);
    expect(changedFields({ groups: ['a'] }, { groups: ['a', 'b'] })).toEqual([
      { field: 'groups', before: '["a"]', after: '["a","b"]' },
    ]);
  });
});
