import type { Team, TeamMember, TeamToolServer, ToolServer } from '../../api/types';
import { Link } from '../../router/router';
import { Section } from '../../ui/page';
import { QueryView } from '../../ui/states';
import { Table } from '../../ui/table';
import { useToolServers } from '../tool-servers/use-tool-servers';
import { poolRoles } from './team-rules';
import { useMembers, useTeamToolServers } from './use-teams';

/**
 * The team's MCP tool-server pool, read-only: who may add to it under the team's share policy, whether new members
 * join it, the servers in it with who shares each and their tools, and the tool servers of yours that your team keys
 * reach beside it (docs/mcp.md "Who sees which tools").
 */
export function TeamToolPool({ team }: { team: Team }) {
  const members = useMembers(team.id);
  const pool = useTeamToolServers(team.id);
  const servers = useToolServers();
  const roles = poolRoles(team.share_policy);

  return (
    <Section title="Tool-server pool">
      <p>
        At the gateway&apos;s <code>/mcp</code>, a key of {team.name} reaches its holder&apos;s own tool servers and the
        team&apos;s pool: the servers of the members below who pool theirs. A server of yours shadows a pooled one with
        the same slug.
      </p>
      <dl className="facts">
        <div className="fact">
          <dt>Who may add to the pool</dt>
          <dd>{team.share_policy === 'editors' ? 'Editors, admins and owners' : 'Every member'}</dd>
        </div>
        <div className="fact">
          <dt>New members pool their servers</dt>
          <dd>{team.share_defaults.mcp ? 'Yes, from the day they join' : 'No'}</dd>
        </div>
      </dl>
      <QueryView
        query={members}
        what="the members who may add to the pool"
        empty={(page) => !page.data.some((member) => roles.includes(member.role))}
        emptyMessage={<p>No member&apos;s role lets them add to the pool.</p>}
      >
        {(page) => (
          <Table<TeamMember>
            caption="Members who may add to the pool"
            rows={page.data.filter((member) => roles.includes(member.role))}
            rowKey={(member) => member.user_id}
            columns={[
              { header: 'Member', cell: (member) => member.email ?? member.user_id },
              { header: 'Role', cell: (member) => member.role },
            ]}
          />
        )}
      </QueryView>
      <h3>Servers in the pool</h3>
      <QueryView
        query={pool}
        what="the servers in the pool"
        empty={(page) => page.data.length === 0}
        emptyMessage={<p>No member pools a tool server yet.</p>}
      >
        {(page) => (
          <Table<TeamToolServer>
            caption="Servers in the pool"
            rows={page.data}
            rowKey={(server) => server.id}
            columns={[
              { header: 'Label', cell: (server) => server.label },
              { header: 'Slug', cell: (server) => <code>{server.slug}</code> },
              { header: 'Shared by', cell: (server) => server.shared_by.email || server.shared_by.user_id },
              {
                header: 'Tools',
                cell: (server) =>
                  server.tools.length === 0 ? 'None found yet' : server.tools.map((tool) => tool.name).join(', '),
              },
            ]}
          />
        )}
      </QueryView>
      <h3>Your tool servers</h3>
      <QueryView
        query={servers}
        what="your tool servers"
        empty={(page) => page.data.length === 0}
        emptyMessage={
          <p>
            You have no tool servers. <Link to="tool-servers">Add one</Link> and your team keys reach it.
          </p>
        }
      >
        {(page) => (
          <Table<ToolServer>
            caption="Your tool servers, reached by your team keys"
            rows={page.data}
            rowKey={(server) => server.id}
            columns={[
              { header: 'Label', cell: (server) => server.label },
              { header: 'Slug', cell: (server) => <code>{server.slug}</code> },
              { header: 'Tools', cell: (server) => server.tools.length, numeric: true },
            ]}
          />
        )}
      </QueryView>
    </Section>
  );
}
