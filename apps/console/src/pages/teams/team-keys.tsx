import { useState, type FormEvent } from 'react';
import { TEAM_KEY_EXCLUDED } from '@sbc/scopes';
import type { CallerKey, MintedKey, Team } from '../../api/types';
import { useKeys, useMintKey } from '../../hooks/use-keys';
import { dateTime } from '../../ui/format';
import { Section } from '../../ui/page';
import { SecretOnce } from '../../ui/secret-once';
import { ErrorState, QueryView } from '../../ui/states';
import { Table } from '../../ui/table';

const PRESETS = ['gateway', 'read_only', 'full_access'] as const;
type Preset = (typeof PRESETS)[number];
const PRESET_NAMES: Record<Preset, string> = { gateway: 'Gateway', read_only: 'Read-only', full_access: 'Full access' };
const presetOf = (value: string) => PRESETS.find((one) => one === value) ?? 'gateway';

/** Your keys on this team (`org_id`), with the scopes they hold after the team cap; mint one. */
export function TeamKeys({ team }: { team: Team }) {
  const keys = useKeys();
  const mint = useMintKey();
  const [name, setName] = useState('');
  const [preset, setPreset] = useState<Preset>('gateway');
  const [minted, setMinted] = useState<MintedKey>();

  const submit = (event: FormEvent) => {
    event.preventDefault();
    mint.mutate({ name, preset, org_id: team.id }, { onSuccess: (key) => (setMinted(key), setName('')) });
  };

  return (
    <Section title="Team keys">
      <p>
        A team key bills and reports to {team.name}. Whatever it is minted with, it never holds{' '}
        {TEAM_KEY_EXCLUDED.join(', ')}: the scopes below are the ones it really has.
      </p>
      {minted && <SecretOnce minted={minted} onDone={() => setMinted(undefined)} />}
      <form onSubmit={submit} aria-label="Mint a team key" className="row">
        <label>
          Key name
          <input required maxLength={64} value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <label>
          Access
          <select value={preset} onChange={(e) => setPreset(presetOf(e.target.value))}>
            {PRESETS.map((one) => (
              <option key={one} value={one}>
                {PRESET_NAMES[one]}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" disabled={mint.isPending}>
          Mint team key
        </button>
      </form>
      {mint.error && <ErrorState error={mint.error} />}
      <QueryView
        query={keys}
        what="team keys"
        empty={(page) => !page.data.some((key) => key.org_id === team.id)}
        emptyMessage={<p>You hold no key on this team yet.</p>}
      >
        {(page) => (
          <Table<CallerKey>
            caption={`Your keys on ${team.name}`}
            rows={page.data.filter((key) => key.org_id === team.id)}
            rowKey={(key) => key.id}
            columns={[
              { header: 'Name', cell: (key) => key.name },
              { header: 'Key', cell: (key) => <code>{key.mask}</code> },
              { header: 'Scopes held', cell: (key) => key.scopes.join(', ') || 'None' },
              { header: 'Status', cell: (key) => (key.revoked_at ? `Revoked ${dateTime(key.revoked_at)}` : 'Active') },
            ]}
          />
        )}
      </QueryView>
    </Section>
  );
}
