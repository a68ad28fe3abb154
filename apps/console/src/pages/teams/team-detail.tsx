import { useState, type FormEvent } from 'react';
import type { Team } from '../../api/types';
import { useSession } from '../../api/session';
import { Section } from '../../ui/page';
import { ErrorState, QueryView } from '../../ui/states';
import { TeamBudget } from './team-budget';
import { TeamInvites } from './team-invites';
import { TeamKeys } from './team-keys';
import { TeamMembers } from './team-members';
import { canManage } from './team-rules';
import { TeamToolPool } from './team-tool-pool';
import { useRenameTeam, useTeam } from './use-teams';

function Rename({ team }: { team: Team }) {
  const rename = useRenameTeam();
  const [name, setName] = useState(team.name);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    rename.mutate({ teamId: team.id, name });
  };
  return (
    <>
      <form onSubmit={submit} aria-label="Rename the team" className="row">
        <label>
          Team name
          <input required maxLength={100} value={name} onChange={(e) => (rename.reset(), setName(e.target.value))} />
        </label>
        <button type="submit" disabled={rename.isPending || !name.trim() || name.trim() === team.name}>
          Rename
        </button>
      </form>
      <div aria-live="polite">{rename.isSuccess && <p role="status">Renamed to {team.name}.</p>}</div>
      {rename.error && <ErrorState error={rename.error} />}
    </>
  );
}

/**
 * One team: its name and budget, members with their roles and budgets, pending invites (owners and admins), the
 * team keys you hold and the tool-server pool they reach.
 */
export function TeamDetail({ teamId }: { teamId: string }) {
  const team = useTeam(teamId);
  const userId = useSession().data?.user.id ?? '';
  return (
    <QueryView query={team} what="the team">
      {(team) => (
        <>
          <Section title={team.name}>
            {canManage(team.role) ? <Rename team={team} /> : <p>Only owners and admins rename the team.</p>}
          </Section>
          <TeamBudget team={team} />
          <TeamMembers team={team} caller={{ userId, role: team.role }} />
          {canManage(team.role) && <TeamInvites team={team} />}
          <TeamKeys team={team} />
          <TeamToolPool team={team} />
        </>
      )}
    </QueryView>
  );
}
