import { useState, type FormEvent } from 'react';
import { useApiMutation, useApiQuery } from '../../api/queries';
import { deleteAlias, listAliases, putAlias } from '../../api/routes';
import type { Alias, AliasPutBody } from '../../api/types';
import { ConfirmDialog } from '../../ui/dialog';
import { Page, Section } from '../../ui/page';
import { ErrorState, QueryView } from '../../ui/states';
import { Table } from '../../ui/table';

const ALIASES = () => ['/v1/aliases'];
// The path takes the token without its @.
const byToken = (token: string) => ({ token: token.replace(/^@/, '') });

const SOURCES = { personal: 'Yours', built_in: 'Built in', catalog: 'Catalog' } as const;

/** @mention aliases: yours first, then built-in and catalog ones; set and delete your own. */
export function AliasesPage() {
  const aliases = useApiQuery(listAliases, {});
  const put = useApiMutation(putAlias, {
    input: ({ token, body }: { token: string; body: AliasPutBody }) => ({ params: byToken(token), body }),
    invalidates: ALIASES,
  });
  const remove = useApiMutation(deleteAlias, {
    input: (token: string) => ({ params: byToken(token) }),
    invalidates: ALIASES,
  });
  const [form, setForm] = useState({ token: '', vendor: '', model_id: '', label: '' });
  const [deleting, setDeleting] = useState<Alias>();
  const [showCatalog, setShowCatalog] = useState(false);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const { token, vendor, model_id, label } = form;
    put.mutate(
      { token, body: { vendor, ...(model_id ? { model_id } : {}), ...(label ? { label } : {}) } },
      { onSuccess: () => setForm({ token: '', vendor: '', model_id: '', label: '' }) },
    );
  };
  const set = (patch: Partial<typeof form>) => setForm({ ...form, ...patch });

  return (
    <Page title="Aliases">
      <Section title="Set an alias">
        <form onSubmit={submit} aria-label="Set an alias" className="row">
          <label>
            Token
            <input
              required
              placeholder="@fast"
              pattern="@?[A-Za-z0-9][A-Za-z0-9._\-]{0,63}"
              value={form.token}
              onChange={(e) => set({ token: e.target.value })}
            />
          </label>
          <label>
            Vendor
            <input
              required
              placeholder="openai"
              value={form.vendor}
              onChange={(e) => set({ vendor: e.target.value })}
            />
          </label>
          <label>
            Model (blank: the token names it)
            <input value={form.model_id} onChange={(e) => set({ model_id: e.target.value })} />
          </label>
          <label>
            Label (optional)
            <input value={form.label} onChange={(e) => set({ label: e.target.value })} />
          </label>
          <button type="submit" disabled={put.isPending}>
            Save alias
          </button>
        </form>
        {put.error && <ErrorState error={put.error} />}
      </Section>
      <Section title="Aliases">
        <label className="inline">
          <input type="checkbox" checked={showCatalog} onChange={(e) => setShowCatalog(e.target.checked)} />
          Show catalog models too
        </label>
        <QueryView query={aliases} what="aliases" empty={(list) => list.length === 0} emptyMessage={<p>No aliases.</p>}>
          {(list) => (
            <Table<Alias>
              caption="Aliases you can @mention"
              rows={list.filter((alias) => showCatalog || alias.source !== 'catalog')}
              rowKey={(alias) => `${alias.source}:${alias.token}`}
              columns={[
                { header: 'Token', cell: (alias) => <code>{alias.token}</code> },
                { header: 'Model', cell: (alias) => `${alias.vendor} / ${alias.model_id}` },
                { header: 'Label', cell: (alias) => alias.label },
                { header: 'Source', cell: (alias) => SOURCES[alias.source] },
                { header: 'Available', cell: (alias) => (alias.available ? 'Yes' : 'No') },
                {
                  header: 'Actions',
                  cell: (alias) =>
                    alias.source === 'personal' ? (
                      <button
                        type="button"
                        className="danger"
                        aria-label={`Delete ${alias.token}`}
                        onClick={() => setDeleting(alias)}
                      >
                        Delete
                      </button>
                    ) : null,
                },
              ]}
            />
          )}
        </QueryView>
      </Section>
      <ConfirmDialog
        open={!!deleting}
        title="Delete this alias?"
        body={<p>{deleting?.token} is removed on every paired device.</p>}
        confirmLabel="Delete alias"
        busy={remove.isPending}
        onConfirm={() => deleting && remove.mutate(deleting.token, { onSuccess: () => setDeleting(undefined) })}
        onClose={() => setDeleting(undefined)}
      />
    </Page>
  );
}
