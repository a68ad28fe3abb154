import { useState, type FormEvent } from 'react';
import type { Team, TeamInvite } from '../../api/types';
import { ConfirmDialog } from '../../ui/dialog';
import { dateTime } from '../../ui/format';
import { Section } from '../../ui/page';
import { ErrorState, QueryView } from '../../ui/states';
import { Table } from '../../ui/table';
import { acceptLink } from './team-rules';
import { useInvite, useInvites, useResendInvite, useRevokeInvite } from './use-teams';

const INVITABLE = ['member', 'editor', 'admin'] as const;

function CopyLink({ invite }: { invite: TeamInvite }) {
  const [copied, setCopied] = useState(false);
  const link = acceptLink(window.location.origin, invite.code);
  // The button's name stays as shown (axe: label-content-name-mismatch); "Copied" is announced beside it.
  return (
    <>
      <button
        type="button"
        aria-label={`Copy link for ${invite.email}`}
        onClick={() =>
          void navigator.clipboard?.writeText(link).then(
            () => setCopied(true),
            () => setCopied(false),
          )
        }
      >
        Copy link
      </button>
      <span role="status">{copied ? 'Copied' : ''}</span>
    </>
  );
}

/** Pending invites (owners and admins only: a code is a credential): send, resend, revoke, copy the link. */
export function TeamInvites({ team }: { team: Team }) {
  const invites = useInvites(team.id);
  const invite = useInvite();
  const resend = useResendInvite();
  const revoke = useRevokeInvite();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<(typeof INVITABLE)[number]>('member');
  const [revoking, setRevoking] = useState<TeamInvite>();

  const submit = (event: FormEvent) => {
    event.preventDefault();
    invite.mutate({ teamId: team.id, email, role }, { onSuccess: () => setEmail('') });
  };

  return (
    <Section title="Invites">
      <p>
        The service sends no mail: copy an invite&apos;s link and pass it on. Only the person signed in with the invited
        address can accept it.
      </p>
      <form onSubmit={submit} aria-label="Invite someone" className="row">
        <label>
          Email to invite
          <input type="email" required maxLength={254} value={email} onChange={(e) => setEmail(e.target.value)} />
        </label>
        <label>
          Role
          <select value={role} onChange={(e) => setRole(INVITABLE.find((one) => one === e.target.value) ?? 'member')}>
            {INVITABLE.map((one) => (
              <option key={one} value={one}>
                {one}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" disabled={invite.isPending}>
          Send invite
        </button>
      </form>
      {invite.error && <ErrorState error={invite.error} />}
      {resend.error && <ErrorState error={resend.error} />}
      <QueryView
        query={invites}
        what="invites"
        empty={(page) => page.data.length === 0}
        emptyMessage={<p>No pending invites.</p>}
      >
        {(page) => (
          <Table<TeamInvite>
            caption={`Pending invites to ${team.name}`}
            rows={page.data}
            rowKey={(one) => one.code}
            columns={[
              { header: 'Email', cell: (one) => one.email },
              { header: 'Role', cell: (one) => one.role },
              {
                header: 'Sent',
                cell: (one) => `${one.sent_count ?? 1}×, last ${dateTime(one.last_sent_at ?? one.created_at)}`,
              },
              {
                header: 'Expires',
                cell: (one) =>
                  one.expires_at && new Date(one.expires_at) < new Date()
                    ? `Expired ${dateTime(one.expires_at)}`
                    : dateTime(one.expires_at),
              },
              {
                header: 'Actions',
                cell: (one) => (
                  <div className="actions">
                    <CopyLink invite={one} />
                    <button
                      type="button"
                      aria-label={`Resend the invite to ${one.email}`}
                      disabled={resend.isPending}
                      onClick={() => resend.mutate({ teamId: team.id, code: one.code })}
                    >
                      Resend
                    </button>
                    <button
                      type="button"
                      className="danger"
                      aria-label={`Revoke the invite to ${one.email}`}
                      onClick={() => (revoke.reset(), setRevoking(one))}
                    >
                      Revoke
                    </button>
                  </div>
                ),
              },
            ]}
          />
        )}
      </QueryView>
      <ConfirmDialog
        open={!!revoking}
        title="Revoke this invite?"
        body={
          <>
            <p>The link sent to {revoking?.email} stops working at once.</p>
            {revoke.error && <ErrorState error={revoke.error} />}
          </>
        }
        confirmLabel="Revoke invite"
        busy={revoke.isPending}
        onConfirm={() =>
          revoking &&
          revoke.mutate({ teamId: team.id, code: revoking.code }, { onSuccess: () => setRevoking(undefined) })
        }
        onClose={() => setRevoking(undefined)}
      />
    </Section>
  );
}
