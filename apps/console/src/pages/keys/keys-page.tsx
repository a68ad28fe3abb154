import { useState, type FormEvent } from 'react';
import { ApiFailure } from '../../api/client';
import type { CallerKey, MintedKey } from '../../api/types';
import { ConfirmDialog, Dialog } from '../../ui/dialog';
import { count, dateTime } from '../../ui/format';
import { Page } from '../../ui/page';
import { ErrorState, QueryView } from '../../ui/states';
import { SecretOnce } from '../../ui/secret-once';
import { Table } from '../../ui/table';
import { createBody, EMPTY_KEY_FORM, updateBody, type KeyFormState } from './key-form';
import { KeyFields } from './key-fields';
import { AgentSnippets } from './agent-snippets';
import { snippetModel } from './snippet-model';
import { useKeys, useMintKey, useRevokeKey, useUpdateKey } from '../../hooks/use-keys';

function formOf(key: CallerKey): KeyFormState {
  return {
    name: key.name,
    preset: 'custom',
    scopes: key.scopes,
    allowedModels: key.allowed_models?.join(', ') ?? '',
    allowedTools: key.allowed_tools?.join(', ') ?? '',
    daily: key.daily_limit_tokens?.toString() ?? '',
    monthly: key.monthly_limit_tokens?.toString() ?? '',
    rpm: key.rpm?.toString() ?? '',
    tpm: key.tpm?.toString() ?? '',
    route: key.route,
    mode: key.mode,
    cacheTtl: key.cache_ttl_s > 0 ? String(key.cache_ttl_s) : '',
    cacheTools: key.cache_tools,
  };
}

function caps(key: CallerKey): string {
  const parts = [
    key.daily_limit_tokens !== undefined && `${count(key.daily_limit_tokens)}/day`,
    key.monthly_limit_tokens !== undefined && `${count(key.monthly_limit_tokens)}/month`,
  ].filter(Boolean);
  return parts.length ? parts.join(', ') : 'None';
}

function limits(key: CallerKey): string {
  const parts = [
    key.rpm !== undefined && `${count(key.rpm)} requests/min`,
    key.tpm !== undefined && `${count(key.tpm)} tokens/min`,
  ].filter(Boolean);
  return parts.length ? parts.join(', ') : 'Service default';
}

/** Keys: the list, mint (secret shown once), edit, and revoke with a confirmation. */
export function KeysPage() {
  const keys = useKeys();
  const mint = useMintKey();
  const update = useUpdateKey();
  const revoke = useRevokeKey();
  const [minting, setMinting] = useState(false);
  const [form, setForm] = useState<KeyFormState>(EMPTY_KEY_FORM);
  const [minted, setMinted] = useState<MintedKey>();
  const [editing, setEditing] = useState<CallerKey>();
  const [revoking, setRevoking] = useState<CallerKey>();
  const [forAgents, setForAgents] = useState<CallerKey>();

  const submitMint = (event: FormEvent) => {
    event.preventDefault();
    mint.mutate(createBody(form), {
      onSuccess: (key) => {
        setMinted(key);
        setMinting(false);
        setForm(EMPTY_KEY_FORM);
      },
    });
  };
  const submitEdit = (event: FormEvent) => {
    event.preventDefault();
    if (editing) update.mutate({ id: editing.id, body: updateBody(form) }, { onSuccess: () => setEditing(undefined) });
  };

  return (
    <Page
      title="Keys"
      actions={
        <button type="button" onClick={() => (mint.reset(), setForm(EMPTY_KEY_FORM), setMinting(true))}>
          Mint a key
        </button>
      }
    >
      {minted && (
        <>
          <SecretOnce minted={minted} onDone={() => setMinted(undefined)} />
          <AgentSnippets secret={minted.key} model={snippetModel(minted.allowed_models)} />
        </>
      )}
      <QueryView
        query={keys}
        what="your keys"
        empty={(page) => page.data.length === 0}
        emptyMessage={<p>No keys yet. Mint one to call the gateway from your tools.</p>}
      >
        {(page) => (
          <Table<CallerKey>
            caption="Your keys"
            rows={page.data}
            rowKey={(key) => key.id}
            columns={[
              { header: 'Name', cell: (key) => key.name },
              { header: 'Key', cell: (key) => <code>{key.mask}</code> },
              { header: 'Scopes', cell: (key) => key.scopes.join(', ') || 'None' },
              { header: 'Caps', cell: caps },
              { header: 'Limits', cell: limits },
              { header: 'Cache', cell: (key) => (key.cache_ttl_s > 0 ? `${count(key.cache_ttl_s)} s` : 'Off') },
              { header: 'Last used', cell: (key) => (key.last_used_at ? dateTime(key.last_used_at) : 'Never') },
              { header: 'Status', cell: (key) => (key.revoked_at ? `Revoked ${dateTime(key.revoked_at)}` : 'Active') },
              {
                header: 'Actions',
                cell: (key) =>
                  key.revoked_at ? null : (
                    <div className="actions">
                      <button
                        type="button"
                        aria-label={`Coding agents for ${key.name}`}
                        onClick={() => setForAgents(key)}
                      >
                        Agents
                      </button>
                      <button
                        type="button"
                        aria-label={`Edit ${key.name}`}
                        onClick={() => (update.reset(), setForm(formOf(key)), setEditing(key))}
                      >
                        Edit
                      </button>
                      <button
                        type="button"
                        className="danger"
                        aria-label={`Revoke ${key.name}`}
                        onClick={() => (revoke.reset(), setRevoking(key))}
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

      <Dialog open={minting} title="Mint a key" onClose={() => setMinting(false)}>
        <form onSubmit={submitMint}>
          <KeyFields form={form} onChange={setForm} />
          {mint.error && <ErrorState error={mint.error} />}
          <div className="actions">
            <button type="button" onClick={() => setMinting(false)}>
              Cancel
            </button>
            <button type="submit" disabled={mint.isPending}>
              Mint key
            </button>
          </div>
        </form>
      </Dialog>

      <Dialog open={!!editing} title={`Edit ${editing?.name ?? 'key'}`} onClose={() => setEditing(undefined)}>
        <form onSubmit={submitEdit}>
          <KeyFields form={form} onChange={setForm} />
          {update.error && <ErrorState error={update.error} />}
          <div className="actions">
            <button type="button" onClick={() => setEditing(undefined)}>
              Cancel
            </button>
            <button type="submit" disabled={update.isPending}>
              Save changes
            </button>
          </div>
        </form>
      </Dialog>

      <Dialog
        open={!!forAgents}
        title={`Use ${forAgents?.name ?? 'a key'} with a coding agent`}
        onClose={() => setForAgents(undefined)}
      >
        {forAgents && <AgentSnippets model={snippetModel(forAgents.allowed_models)} />}
        <div className="actions">
          <button type="button" onClick={() => setForAgents(undefined)}>
            Close
          </button>
        </div>
      </Dialog>

      <ConfirmDialog
        open={!!revoking}
        title="Revoke this key?"
        body={
          <>
            <p>
              <strong>{revoking?.name}</strong> ({revoking?.mask}) stops working at once, at every edge. This cannot be
              undone.
            </p>
            {revoke.error && (
              <p role="alert">{revoke.error instanceof ApiFailure ? revoke.error.message : 'Revoking failed.'}</p>
            )}
          </>
        }
        confirmLabel="Revoke key"
        busy={revoke.isPending}
        onConfirm={() => revoking && revoke.mutate(revoking.id, { onSuccess: () => setRevoking(undefined) })}
        onClose={() => setRevoking(undefined)}
      />
    </Page>
  );
}
