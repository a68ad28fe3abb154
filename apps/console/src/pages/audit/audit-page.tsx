import { useState } from 'react';
import type { AuditEvent, AuditResourceType } from '../../api/types';
import { dateTime } from '../../ui/format';
import { Page } from '../../ui/page';
import { QueryView } from '../../ui/states';
import { Table, type Column } from '../../ui/table';
import { changedFields } from './changes';
import { useAuditLog, type AuditFilters } from './use-audit';
import { DayRangeFields } from '../../ui/day-range';

const RESOURCE_TYPES: { value: AuditResourceType; label: string }[] = [
  { value: 'key', label: 'Keys' },
  { value: 'endpoint', label: 'Endpoints' },
  { value: 'alias', label: 'Aliases' },
  { value: 'team', label: 'Teams' },
  { value: 'team_member', label: 'Team members' },
  { value: 'team_invite', label: 'Team invites' },
  { value: 'device', label: 'Devices' },
  { value: 'webhook', label: 'Webhooks' },
  { value: 'x_build', label: 'X builds' },
  { value: 'x_builds_queue', label: 'X builds queue' },
  { value: 'x_builds_block', label: 'X builds blocklist' },
];
const ACTION = /^[a-z_]+\.[a-z_]+$/;

/** Who made a change: the user, and the key or session they used. */
function actor(event: AuditEvent): string {
  const { user_id: userId, key_id: keyId, session, device_id: deviceId } = event.actor;
  const via = keyId ? `key ${keyId}` : session ? `session ${session}` : deviceId ? `device ${deviceId}` : undefined;
  return via ? `${userId} (${via})` : userId;
}

function Changes({ event }: { event: AuditEvent }) {
  const fields = changedFields(event.changes.before, event.changes.after);
  if (fields.length === 0) return <>No field changed</>;
  return (
    <details>
      <summary>
        {fields.length} field{fields.length === 1 ? '' : 's'} changed
      </summary>
      <dl className="changes">
        {fields.map((field) => (
          <div key={field.field}>
            <dt>{field.field}</dt>
            <dd>
              <code className="breakable">{field.before}</code> → <code className="breakable">{field.after}</code>
            </dd>
          </div>
        ))}
      </dl>
    </details>
  );
}

const columns: Column<AuditEvent>[] = [
  { header: 'Time', cell: (event) => dateTime(event.at) },
  { header: 'Action', cell: (event) => <code>{event.action}</code> },
  { header: 'Resource', cell: (event) => <code className="breakable">{event.resource.id}</code> },
  { header: 'By', cell: (event) => <span className="breakable">{actor(event)}</span> },
  { header: 'Address', cell: (event) => event.ip ?? '—' },
  { header: 'Changes', cell: (event) => <Changes event={event} /> },
];

/**
 * The audit log: every change to the account's keys, endpoints, aliases, devices and webhooks, and to the teams the
 * person administers, newest first, filtered by kind, action, who and days.
 */
export function AuditPage() {
  const [filters, setFilters] = useState<AuditFilters>({});
  const [action, setAction] = useState('');
  const [cursor, setCursor] = useState<{ after_id?: string; before_id?: string }>({});
  const log = useAuditLog(filters, cursor);
  const change = (patch: Partial<AuditFilters>) => {
    setFilters({ ...filters, ...patch });
    setCursor({});
  };

  return (
    <Page title="Audit log">
      <p>
        Who changed what, when and from where: your account’s keys, endpoints, aliases, devices and webhooks, and the
        teams where you are an owner or an admin. Secrets are never recorded. Records cannot be changed or deleted.
      </p>
      <form className="filters" aria-label="Audit log filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Kind
          <select
            value={filters.resource_type ?? ''}
            onChange={(e) => change({ resource_type: (e.target.value || undefined) as AuditResourceType | undefined })}
          >
            <option value="">Any kind</option>
            {RESOURCE_TYPES.map((type) => (
              <option key={type.value} value={type.value}>
                {type.label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Action
          <input
            type="search"
            value={action}
            pattern="[a-z_]+\.[a-z_]+"
            title="A resource kind and a verb, e.g. key.revoke"
            placeholder="e.g. key.revoke"
            onChange={(e) => {
              setAction(e.target.value);
              // Sent once it reads as an action; half-typed text filters nothing yet.
              if (e.target.value === '' || ACTION.test(e.target.value)) change({ action: e.target.value || undefined });
            }}
          />
        </label>
        <label>
          By user
          <input
            type="search"
            value={filters.actor ?? ''}
            placeholder="usr_…"
            onChange={(e) => change({ actor: e.target.value.trim() || undefined })}
          />
        </label>
        <DayRangeFields from={filters.from} to={filters.to} onChange={change} />
      </form>
      <QueryView
        query={log}
        what="the audit log"
        empty={(page) => page.data.length === 0 && !cursor.after_id && !cursor.before_id}
        emptyMessage={<p>No changes match these filters.</p>}
      >
        {(page) => (
          <>
            <Table caption="Changes, newest first" columns={columns} rows={page.data} rowKey={(event) => event.id} />
            <div className="pager">
              <button
                type="button"
                disabled={!cursor.after_id && !(cursor.before_id && page.has_more)}
                onClick={() => setCursor({ before_id: page.first_id ?? undefined })}
              >
                Newer changes
              </button>
              <button
                type="button"
                disabled={cursor.before_id ? false : !page.has_more}
                onClick={() => setCursor({ after_id: page.last_id ?? undefined })}
              >
                Older changes
              </button>
            </div>
          </>
        )}
      </QueryView>
    </Page>
  );
}
