import {
  isTeamRole,
  losesOwner,
  refuseGroupsChange,
  refuseInvite,
  refuseInviteManagement,
  refuseRemoval,
  refuseRoleChange,
  refuseTeamDelete,
  refuseTeamUpdate,
  type Seat,
  type TeamRole,
} from './permissions';

const seat = (userId: string, role: TeamRole): Seat => ({ userId, role });
const owner = seat('usr_owner', 'owner');
const owner2 = seat('usr_owner2', 'owner');
const admin = seat('usr_admin', 'admin');
const admin2 = seat('usr_admin2', 'admin');
const editor = seat('usr_editor', 'editor');
const member = seat('usr_member', 'member');

describe('team settings', () => {
  it('owners and admins change settings; editors and members only read', () => {
    expect(refuseTeamUpdate('owner')).toBeNull();
    expect(refuseTeamUpdate('admin')).toBeNull();
    expect(refuseTeamUpdate('editor')).toMatch(/owners and admins/);
    expect(refuseTeamUpdate('member')).toMatch(/owners and admins/);
  });

  it('only an owner deletes the team', () => {
    expect(refuseTeamDelete('owner')).toBeNull();
    for (const role of ['admin', 'editor', 'member'] as const) expect(refuseTeamDelete(role)).toMatch(/owner/);
  });
});

describe('invites', () => {
  it('owners and admins manage invites; editors and members do not see codes', () => {
    expect(refuseInviteManagement('owner')).toBeNull();
    expect(refuseInviteManagement('admin')).toBeNull();
    expect(refuseInviteManagement('editor')).not.toBeNull();
    expect(refuseInviteManagement('member')).not.toBeNull();
  });

  it('an admin may invite admins, editors and members, never an owner', () => {
    expect(refuseInvite('admin', 'admin')).toBeNull();
    expect(refuseInvite('admin', 'member')).toBeNull();
    expect(refuseInvite('owner', 'owner')).toMatch(/cannot make an owner/);
    expect(refuseInvite('member', 'member')).toMatch(/owners and admins/);
  });
});

describe('role changes', () => {
  it('an owner changes anyone, including making and demoting owners', () => {
    expect(refuseRoleChange(owner, admin, 'owner')).toBeNull();
    expect(refuseRoleChange(owner, owner2, 'member')).toBeNull();
    expect(refuseRoleChange(owner, member, 'admin')).toBeNull();
  });

  it('an admin changes editors and members up to admin', () => {
    expect(refuseRoleChange(admin, member, 'admin')).toBeNull();
    expect(refuseRoleChange(admin, editor, 'member')).toBeNull();
    expect(refuseRoleChange(admin, member, 'owner')).toMatch(/Only an owner may make another owner/);
  });

  it('an admin cannot demote an owner or another admin', () => {
    expect(refuseRoleChange(admin, owner, 'member')).toMatch(/role of an owner/);
    expect(refuseRoleChange(admin, admin2, 'member')).toMatch(/role of an admin/);
  });

  it('editors and members change no one else', () => {
    expect(refuseRoleChange(editor, member, 'editor')).toMatch(/owners and admins/);
    expect(refuseRoleChange(member, member, 'admin')).toMatch(/owners and admins/);
  });

  it('anyone may step down, no one may promote themselves past their managers', () => {
    expect(refuseRoleChange(member, member, 'member')).toBeNull();
    expect(refuseRoleChange(editor, editor, 'member')).toBeNull();
    expect(refuseRoleChange(admin, admin, 'member')).toBeNull();
    expect(refuseRoleChange(owner, owner, 'admin')).toBeNull();
    expect(refuseRoleChange(admin, admin, 'owner')).toMatch(/Only an owner/);
    expect(refuseRoleChange(editor, editor, 'admin')).not.toBeNull();
  });

  it('an owner seat is lost only when an owner is demoted or removed', () => {
    expect(losesOwner(owner, 'admin')).toBe(true);
    expect(losesOwner(owner, 'removed')).toBe(true);
    expect(losesOwner(owner, 'owner')).toBe(false);
    expect(losesOwner(admin, 'removed')).toBe(false);
  });
});

describe('groups and removal', () => {
  it('groups are managed like roles', () => {
    expect(refuseGroupsChange(owner, admin)).toBeNull();
    expect(refuseGroupsChange(admin, editor)).toBeNull();
    expect(refuseGroupsChange(admin, admin)).toBeNull();
    expect(refuseGroupsChange(admin, owner)).toMatch(/groups of an owner/);
    expect(refuseGroupsChange(member, member)).toMatch(/owners and admins/);
  });

  it('anyone may leave; owners remove anyone; admins remove editors and members', () => {
    expect(refuseRemoval(member, member)).toBeNull();
    expect(refuseRemoval(owner, owner2)).toBeNull();
    expect(refuseRemoval(admin, editor)).toBeNull();
    expect(refuseRemoval(admin, admin2)).toMatch(/remove an admin/);
    expect(refuseRemoval(admin, owner)).toMatch(/remove an owner/);
    expect(refuseRemoval(editor, member)).toMatch(/anyone may leave/);
  });
});

describe('role names', () => {
  it('knows the four roles and nothing else', () => {
    expect(['owner', 'admin', 'editor', 'member'].every(isTeamRole)).toBe(true);
    expect(isTeamRole('root')).toBe(false);
  });
});
