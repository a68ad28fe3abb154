import { useId, useState, type FormEvent } from 'react';
import type { CreateUpstreamBody, Upstream, UpstreamWithProbe } from '../../api/types';
import { ConfirmDialog, Dialog } from '../../ui/dialog';
import { Page, Section } from '../../ui/page';
import { AddAndProbeForm, ProbedRowActions } from '../../ui/probed-resource';
import { ErrorState, QueryView } from '../../ui/states';
import { Table } from '../../ui/table';
import { ProbeResult } from './probe-result';
import { useAddEndpoint, useDeleteEndpoint, useEditEndpoint, useEndpoints, useProbeEndpoint } from './use-endpoints';

interface EndpointForm {
  label: string;
  base_url: string;
  api_key: string;
  dialect: 'auto' | 'openai' | 'anthropic';
  /** As typed; the input's min, max and step keep it a whole number from 0 to 100. */
  weight: string;
}
const EMPTY: EndpointForm = { label: '', base_url: '', api_key: '', dialect: 'auto', weight: '1' };

/** The form as the API takes it. */
function bodyOf({ weight, ...form }: EndpointForm): CreateUpstreamBody {
  return { ...form, weight: Number(weight) };
}

function EndpointFields({
  form,
  onChange,
  editing,
}: {
  form: EndpointForm;
  onChange: (form: EndpointForm) => void;
  editing: boolean;
}) {
  const set = (patch: Partial<EndpointForm>) => onChange({ ...form, ...patch });
  const weightHint = useId();
  return (
    <>
      <label>
        Label
        <input required maxLength={128} value={form.label} onChange={(e) => set({ label: e.target.value })} />
      </label>
      <label>
        Base URL
        <input
          type="url"
          required
          placeholder="https://api.example.com/v1"
          value={form.base_url}
          onChange={(e) => set({ base_url: e.target.value })}
        />
      </label>
      <label>
        {editing ? 'API key (blank keeps the stored one)' : 'API key (blank if none is needed)'}
        <input
          type="password"
          autoComplete="off"
          value={form.api_key}
          onChange={(e) => set({ api_key: e.target.value })}
        />
      </label>
      <label>
        Dialect
        <select value={form.dialect} onChange={(e) => set({ dialect: e.target.value as EndpointForm['dialect'] })}>
          <option value="auto">Detect (probe both)</option>
          <option value="openai">OpenAI</option>
          <option value="anthropic">Anthropic</option>
        </select>
      </label>
      <div>
        <label>
          Weight
          <input
            type="number"
            required
            min={0}
            max={100}
            step={1}
            inputMode="numeric"
            aria-describedby={weightHint}
            value={form.weight}
            onChange={(e) => set({ weight: e.target.value })}
          />
        </label>
        <p id={weightHint} className="hint field-hint">
          Share of a model&apos;s calls among your endpoints listing it, 0–100; 0 is standby, used only when the others
          fail.
        </p>
      </div>
    </>
  );
}

/** Custom endpoints: add one and watch its probe, re-probe, edit, delete. */
export function EndpointsPage() {
  const endpoints = useEndpoints();
  const add = useAddEndpoint();
  const edit = useEditEndpoint();
  const probe = useProbeEndpoint();
  const remove = useDeleteEndpoint();
  const [form, setForm] = useState<EndpointForm>(EMPTY);
  const [editing, setEditing] = useState<Upstream>();
  const [deleting, setDeleting] = useState<Upstream>();
  const [last, setLast] = useState<UpstreamWithProbe>();

  const submitAdd = (event: FormEvent) => {
    event.preventDefault();
    add.mutate(bodyOf(form), { onSuccess: (result) => (setLast(result), setForm(EMPTY)) });
  };
  const submitEdit = (event: FormEvent) => {
    event.preventDefault();
    if (!editing) return;
    const { api_key, ...rest } = bodyOf(form);
    edit.mutate(
      { slug: editing.slug, body: { ...rest, ...(api_key ? { api_key } : {}) } },
      { onSuccess: (result) => (setLast(result), setEditing(undefined)) },
    );
  };

  return (
    <Page title="Endpoints">
      <Section title="Add an endpoint">
        <AddAndProbeForm
          name="Add an endpoint"
          onSubmit={submitAdd}
          error={add.error}
          pending={add.isPending}
          disabled={!!editing}
          last={last && { label: last.upstream.label, report: <ProbeResult probe={last.probe} live /> }}
        >
          {!editing && <EndpointFields form={form} onChange={setForm} editing={false} />}
        </AddAndProbeForm>
      </Section>
      <Section title="Your endpoints">
        <QueryView
          query={endpoints}
          what="your endpoints"
          empty={(page) => page.data.length === 0}
          emptyMessage={<p>No custom endpoints yet. Add one above to route models to your own provider account.</p>}
        >
          {(page) => (
            <Table<Upstream>
              caption="Custom endpoints"
              rows={page.data}
              rowKey={(row) => row.id}
              columns={[
                { header: 'Label', cell: (row) => row.label },
                { header: 'Slug', cell: (row) => <code>{row.slug}</code> },
                { header: 'Base URL', cell: (row) => row.base_url },
                {
                  header: 'Dialect',
                  cell: (row) => `${row.dialect}${row.dialect_setting === 'auto' ? ' (detected)' : ''}`,
                },
                { header: 'Models', cell: (row) => row.models?.length ?? 0, numeric: true },
                {
                  header: 'Weight',
                  cell: (row) => (row.weight === 0 ? '0 (standby)' : row.weight),
                  numeric: true,
                },
                { header: 'Last probe', cell: (row) => <ProbeResult probe={row.probe} /> },
                {
                  header: 'Actions',
                  cell: (row) => (
                    <ProbedRowActions
                      label={row.label}
                      probing={probe.isPending}
                      onProbe={() => probe.mutate(row.slug, { onSuccess: setLast })}
                      onDelete={() => (remove.reset(), setDeleting(row))}
                    >
                      <button
                        type="button"
                        aria-label={`Edit ${row.label}`}
                        onClick={() => (
                          edit.reset(),
                          setForm({
                            label: row.label,
                            base_url: row.base_url,
                            api_key: '',
                            dialect: row.dialect_setting,
                            weight: String(row.weight),
                          }),
                          setEditing(row)
                        )}
                      >
                        Edit
                      </button>
                    </ProbedRowActions>
                  ),
                },
              ]}
            />
          )}
        </QueryView>
        {probe.error && <ErrorState error={probe.error} />}
      </Section>

      <Dialog open={!!editing} title="Edit endpoint" onClose={() => (setEditing(undefined), setForm(EMPTY))}>
        <form onSubmit={submitEdit} className="stack">
          <EndpointFields form={form} onChange={setForm} editing />
          {edit.error && <ErrorState error={edit.error} />}
          <div className="actions">
            <button type="button" onClick={() => (setEditing(undefined), setForm(EMPTY))}>
              Cancel
            </button>
            <button type="submit" disabled={edit.isPending}>
              Save and probe
            </button>
          </div>
        </form>
      </Dialog>

      <ConfirmDialog
        open={!!deleting}
        title="Delete this endpoint?"
        body={<p>{deleting?.label}: its stored key is removed and its models stop routing at once.</p>}
        confirmLabel="Delete endpoint"
        busy={remove.isPending}
        onConfirm={() => deleting && remove.mutate(deleting.slug, { onSuccess: () => setDeleting(undefined) })}
        onClose={() => setDeleting(undefined)}
      />
    </Page>
  );
}
