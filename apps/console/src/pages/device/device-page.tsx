import { useState, type FormEvent } from 'react';
import { useApprovePairing, useDenyPairing } from '../../hooks/use-devices';
import type { PairingDecision } from '../../api/types';
import { useLocation } from '../../router/router';
import { Page } from '../../ui/page';
import { ErrorState } from '../../ui/states';

function describe(device: PairingDecision['device']): string {
  const facts = [
    device.label && `“${device.label}”`,
    device.kind,
    device.agent && `${device.agent.agent_vendor} agent`,
  ].filter(Boolean);
  return facts.length ? facts.join(', ') : 'a device';
}

/**
 * Where a pairing flow sends a person (its verification_uri, /device, leads here with user_code): they check
 * the code their device shows, then approve or deny it with their session.
 */
export function DevicePage() {
  const { query } = useLocation();
  const [code, setCode] = useState(query.get('user_code') ?? '');
  const approve = useApprovePairing();
  const deny = useDenyPairing();
  const decision = approve.data ?? deny.data;
  const busy = approve.isPending || deny.isPending;
  const failure = approve.error ?? deny.error;
  const reset = () => (approve.reset(), deny.reset());

  const submit = (verb: 'approve' | 'deny') => (event?: FormEvent) => {
    event?.preventDefault();
    reset();
    (verb === 'approve' ? approve : deny).mutate(code);
  };

  return (
    <Page title="Device activation">
      <p>
        A device or tool asked to use your account. Check that the code below is the one it shows, then approve it, or
        deny it if you did not start this.
      </p>
      <form onSubmit={submit('approve')} aria-label="Device activation" className="stack">
        <label>
          Code shown on the device
          <input
            required
            autoComplete="off"
            autoCapitalize="characters"
            spellCheck={false}
            maxLength={32}
            value={code}
            onChange={(e) => (reset(), setCode(e.target.value))}
          />
        </label>
        <div className="actions">
          <button type="submit" disabled={busy || !code.trim()}>
            Approve
          </button>
          <button type="button" className="danger" disabled={busy || !code.trim()} onClick={submit('deny')}>
            Deny
          </button>
        </div>
      </form>
      <div aria-live="polite">
        {decision && (
          <p role="status" className={decision.status === 'approved' ? 'ok' : 'bad'}>
            {decision.status === 'approved' ? 'Approved' : 'Denied'}: {describe(decision.device)} ({decision.user_code}
            ).{' '}
            {decision.status === 'approved'
              ? 'It is signed in now; you can close this page.'
              : 'It will not get access.'}
          </p>
        )}
        {failure && <ErrorState error={failure} />}
      </div>
    </Page>
  );
}
