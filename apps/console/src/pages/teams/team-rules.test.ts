import type { TeamMember, TeamRole } from '../../api/types';
import { acceptLink, assignableRoles, canRemove, isLastOwner, poolRoles } from './team-rules';

const member = (user_id: string, role: TeamRole): TeamMember => ({
  object: 'team_member',
  user_id,
  role,
  groups: [],
  joined_at: '2026-01-01T00:00:00Z',
});

describe('team roles in the console', () => {
  const owner = member('usr_owner', 'owner');
  const admin = member('usr_admin', 'admin');
  const editor = member('usr_editor', 'editor');
  const team = [owner, admin, editor];

  it('the last owner can neither be demoted nor leave, even by themselves', () => {
    expect(isLastOwner(owner, team)).toBe(true);
    expect(assignableRoles({ userId: owner.user_id, role: 'owner' }, owner, team)).toEqual([]);
    expect(canRemove({ userId: owner.user_id, role: 'owner' }, owner, team)).toBe(false);
  });

  it('with a second owner, an owner may step down or leave', () => {
    const two = [...team, member('usr_owner2', 'owner')];
    expect(isLastOwner(owner, two)).toBe(false);
    expect(assignableRoles({ userId: owner.user_id, role: 'owner' }, owner, two)).toContain('member');
    expect(canRemove({ userId: owner.user_id, role: 'owner' }, owner, two)).toBe(true);
  });

  it('an admin changes editors and members up to admin, never an owner or another admin', () => {
    const caller = { userId: admin.user_id, role: 'admin' as const };
    expect(assignableRoles(caller, editor, team)).toEqual(['admin', 'editor', 'member']);
    expect(assignableRoles(caller, owner, team)).toEqual([]);
    expect(canRemove(caller, editor, team)).toBe(true);
    expect(canRemove(caller, member('usr_admin2', 'admin'), team)).toBe(false);
  });

  it('a member may only step down or leave', () => {
    const plain = member('usr_plain', 'member');
    const caller = { userId: plain.user_id, role: 'member' as const };
    expect(assignableRoles(caller, plain, [...team, plain])).toEqual(['member']);
    expect(assignableRoles(caller, editor, [...team, plain])).toEqual([]);
    expect(canRemove(caller, plain, [...team, plain])).toBe(true);
  });

  it('builds the accept link on the given origin with the code encoded', () => {
    expect(acceptLink('http://127.0.0.1:8080', 'a/b')).toBe('http://127.0.0.1:8080/console/invite?code=a%2Fb');
  });

  it("the tool-server pool takes anyone's servers, or under the editors policy no plain member's", () => {
    expect(poolRoles('members')).toEqual(['owner', 'admin', 'editor', 'member']);
    expect(poolRoles('editors')).toEqual(['owner', 'admin', 'editor']);
  });
});
