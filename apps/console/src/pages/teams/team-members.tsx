import { useState } from 'react';
import type { Team, TeamMember, TeamRole } from '../../api/types';
import { navigate } from '../../router/router';
import { ConfirmDialog } from '../../ui/dialog';
import { dateTime } from '../../ui/format';
import { Section } from '../../ui/page';
import { ErrorState, QueryView } from '../../ui/states';
import { Table } from '../../ui/table';
import { MemberBudget } from './team-budget';
import { assignableRoles, canRemove, isLastOwner } from './team-rules';
import { useChangeRole, useMembers, useRemoveMember } from './use-teams';

type Caller = { userId: string; role: TeamRole };

function RoleCell({
  team,
  caller,
  member,
  members,
}: {
  team: Team;
  caller: Caller;
  member: TeamMember;
  members: TeamMember[];
}) {
  const change = useChangeRole();
  const roles = assignableRoles(caller, member, members);
  const who = member.email ?? member.user_id;
  if (roles.length === 0)
    return (
      <>
        {member.role}
        {isLastOwner(member, members) && <span className="note"> (the last owner: make another owner first)</span>}
      </>
    );
  return (
    <>
      <select
        aria-label={`Role of ${who}`}
        value={member.role}
        disabled={change.isPending}
        onChange={(e) => {
          const role = roles.find((one) => one === e.target.value);
          if (role) change.mutate({ teamId: team.id, userId: member.user_id, role });
        }}
      >
        {roles.map((role) => (
          <option key={role} value={role}>
            {role}
          </option>
        ))}
      </select>
      {change.error && <ErrorState error={change.error} />}
    </>
  );
}

export function TeamMembers({ team, caller }: { team: Team; caller: Caller }) {
  const members = useMembers(team.id);
  const remove = useRemoveMember();
  const [removing, setRemoving] = useState<TeamMember>();
  const leaving = removing?.user_id === caller.userId;

  return (
    <Section title="Members">
      <QueryView query={members} what="members">
        {(page) => (
          <Table<TeamMember>
            caption={`Members of ${team.name}`}
            rows={page.data}
            rowKey={(member) => member.user_id}
            columns={[
              {
                header: 'Member',
                cell: (member) =>
                  `${member.email ?? member.user_id}${member.user_id === caller.userId ? ' (you)' : ''}`,
              },
              {
                header: 'Role',
                cell: (member) => <RoleCell team={team} caller={caller} member={member} members={page.data} />,
              },
              { header: 'Budget', cell: (member) => <MemberBudget team={team} member={member} /> },
              { header: 'Joined', cell: (member) => dateTime(member.joined_at) },
              {
                header: 'Actions',
                cell: (member) =>
                  canRemove(caller, member, page.data) ? (
                    <button
                      type="button"
                      className="danger"
                      aria-label={
                        member.user_id === caller.userId
                          ? `Leave ${team.name}`
                          : `Remove ${member.email ?? member.user_id}`
                      }
                      onClick={() => (remove.reset(), setRemoving(member))}
                    >
                      {member.user_id === caller.userId ? 'Leave' : 'Remove'}
                    </button>
                  ) : null,
              },
            ]}
          />
        )}
      </QueryView>
      <ConfirmDialog
        open={!!removing}
        title={leaving ? 'Leave this team?' : 'Remove this member?'}
        body={
          <>
            <p>
              {leaving ? 'You lose' : `${removing?.email ?? removing?.user_id} loses`} access to {team.name}, and the
              team keys {leaving ? 'you hold' : 'they hold'} on it are revoked.
            </p>
            {remove.error && <ErrorState error={remove.error} />}
          </>
        }
        confirmLabel={leaving ? 'Leave team' : 'Remove member'}
        busy={remove.isPending}
        onConfirm={() =>
          removing &&
          remove.mutate(
            { teamId: team.id, userId: removing.user_id },
            { onSuccess: () => (setRemoving(undefined), leaving && navigate('teams')) },
          )
        }
        onClose={() => setRemoving(undefined)}
      />
    </Section>
  );
}
