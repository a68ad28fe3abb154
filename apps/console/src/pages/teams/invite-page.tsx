import { ApiFailure } from '../../api/client';
import { Link, useLocation } from '../../router/router';
import { Page } from '../../ui/page';
import { ErrorState } from '../../ui/states';
import { useAcceptInvite } from './use-teams';

function refusal(error: unknown): string | undefined {
  if (!(error instanceof ApiFailure)) return undefined;
  if (error.status === 403)
    return 'This invite was sent to another address. Sign out and sign in with the invited address to accept it.';
  if (error.status === 404) return 'This invite is no longer valid: it was used, revoked or has expired.';
  if (error.status === 409) return 'You are already in this team.';
  return undefined;
}

/** Where an invite's link leads (`?code=`): the invited person accepts and joins the team. */
export function InvitePage() {
  const code = useLocation().query.get('code') ?? '';
  const accept = useAcceptInvite();
  const explained = refusal(accept.error);
  return (
    <Page title="Team invite">
      {!code ? (
        <p>This link has no invite code. Open the link exactly as it was sent to you.</p>
      ) : accept.data ? (
        <p role="status" className="ok">
          You joined <strong>{accept.data.name}</strong> as {accept.data.role}.{' '}
          <Link to={`teams?team=${encodeURIComponent(accept.data.id)}`}>Open the team</Link>
        </p>
      ) : (
        <>
          <p>You were invited to join a team. Accepting adds you with the role the invite names.</p>
          <div className="actions">
            <button type="button" disabled={accept.isPending} onClick={() => accept.mutate(code)}>
              Accept the invite
            </button>
          </div>
          <div aria-live="polite">
            {explained ? (
              <p role="alert" className="bad">
                {explained}
              </p>
            ) : (
              accept.error && <ErrorState error={accept.error} />
            )}
          </div>
        </>
      )}
    </Page>
  );
}
