import { useState, type FormEvent } from 'react';
import type { Team } from '../../api/types';
import { Link, useLocation } from '../../router/router';
import { dateTime } from '../../ui/format';
import { Page, Section } from '../../ui/page';
import { ErrorState, QueryView } from '../../ui/states';
import { Table } from '../../ui/table';
import { TeamDetail } from './team-detail';
import { useCreateTeam, useTeams } from './use-teams';

const ROLE_NAMES = { owner: 'Owner', admin: 'Admin', editor: 'Editor', member: 'Member' } as const;

/** Teams: the ones you are in, a new one; `?team=` opens one with its members, invites and keys. */
export function TeamsPage() {
  const teams = useTeams();
  const create = useCreateTeam();
  const [name, setName] = useState('');
  const open = useLocation().query.get('team');

  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate(name, { onSuccess: () => setName('') });
  };

  return (
    <Page title="Teams">
      <Section title="Your teams">
        <QueryView
          query={teams}
          what="your teams"
          empty={(page) => page.data.length === 0}
          emptyMessage={<p>You are in no team yet. Create one below, or accept an invite someone sent you.</p>}
        >
          {(page) => (
            <Table<Team>
              caption="Teams you are in"
              rows={page.data}
              rowKey={(team) => team.id}
              columns={[
                {
                  header: 'Team',
                  cell: (team) => (
                    <Link to={`teams?team=${encodeURIComponent(team.id)}`} aria-current={team.id === open || undefined}>
                      {team.name}
                    </Link>
                  ),
                },
                { header: 'Your role', cell: (team) => ROLE_NAMES[team.role] },
                { header: 'Members', cell: (team) => team.member_count, numeric: true },
                { header: 'Created', cell: (team) => dateTime(team.created_at) },
              ]}
            />
          )}
        </QueryView>
        <form onSubmit={submit} aria-label="Create a team" className="row">
          <label>
            New team name
            <input required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />
          </label>
          <button type="submit" disabled={create.isPending || !name.trim()}>
            Create team
          </button>
        </form>
        {create.error && <ErrorState error={create.error} />}
      </Section>
      {open && <TeamDetail key={open} teamId={open} />}
    </Page>
  );
}
