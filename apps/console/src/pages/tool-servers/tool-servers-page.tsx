import { useId, useState, type FormEvent } from 'react';
import type { ToolServer, ToolServerProbe, ToolServerWithProbe } from '../../api/types';
import { ConfirmDialog } from '../../ui/dialog';
import { Page, Section } from '../../ui/page';
import { AddAndProbeForm, ProbedRowActions, ProbeReport } from '../../ui/probed-resource';
import { ErrorState, QueryView } from '../../ui/states';
import { Table } from '../../ui/table';
import { parseHeaderLines } from './headers-text';
import { useAddToolServer, useDeleteToolServer, useProbeToolServer, useToolServers } from './use-tool-servers';

interface ToolServerForm {
  label: string;
  url: string;
  bearer_token: string;
  /** One `Name: value` per line. */
  headers: string;
}
const EMPTY: ToolServerForm = { label: '', url: '', bearer_token: '', headers: '' };

/** A probe's outcome in words: the server and how many tools it listed, or why it failed. */
function ToolProbe({ probe, live }: { probe: ToolServerProbe | undefined; live?: boolean }) {
  const server = probe?.server_name
    ? `${probe.server_name}${probe.server_version ? ` ${probe.server_version}` : ''}`
    : '';
  return (
    <ProbeReport
      probe={probe}
      live={live}
      found={`Answered${server ? ` as ${server}` : ''}; ${probe?.tools_found ?? 0} tools found`}
    />
  );
}

/** The tools a server listed, named as a key's `allowed_tools` and `/mcp` name them. */
function ToolList({ server }: { server: ToolServer }) {
  if (server.tools.length === 0) return <span className="hint">None found</span>;
  return (
    <details>
      <summary>{server.tools.length} tools</summary>
      <ul className="plain">
        {server.tools.map((tool) => (
          <li key={tool.name}>
            <code>{`${server.slug}__${tool.name}`}</code>
            {tool.description ? <span className="hint"> — {tool.description}</span> : null}
          </li>
        ))}
      </ul>
    </details>
  );
}

/** MCP tool servers: add one and see its probe and tools, re-probe, delete. */
export function ToolServersPage() {
  const servers = useToolServers();
  const add = useAddToolServer();
  const probe = useProbeToolServer();
  const remove = useDeleteToolServer();
  const [form, setForm] = useState<ToolServerForm>(EMPTY);
  const [formError, setFormError] = useState<string>();
  const [deleting, setDeleting] = useState<ToolServer>();
  const [last, setLast] = useState<ToolServerWithProbe>();
  const headersHint = useId();
  const set = (patch: Partial<ToolServerForm>) => setForm({ ...form, ...patch });

  const submitAdd = (event: FormEvent) => {
    event.preventDefault();
    const parsed = parseHeaderLines(form.headers);
    if ('error' in parsed) return setFormError(parsed.error);
    setFormError(undefined);
    add.mutate(
      {
        label: form.label,
        url: form.url,
        ...(Object.keys(parsed.headers).length > 0 ? { headers: parsed.headers } : {}),
        ...(form.bearer_token ? { bearer_token: form.bearer_token } : {}),
      },
      { onSuccess: (result) => (setLast(result), setForm(EMPTY)) },
    );
  };

  return (
    <Page title="Tool servers">
      <Section title="Add an MCP tool server">
        <AddAndProbeForm
          name="Add a tool server"
          onSubmit={submitAdd}
          error={add.error}
          pending={add.isPending}
          last={last && { label: last.server.label, report: <ToolProbe probe={last.probe} live /> }}
        >
          <label>
            Label
            <input required maxLength={128} value={form.label} onChange={(e) => set({ label: e.target.value })} />
          </label>
          <label>
            MCP URL (Streamable HTTP)
            <input
              type="url"
              required
              placeholder="https://tools.example.com/mcp"
              value={form.url}
              onChange={(e) => set({ url: e.target.value })}
            />
          </label>
          <label>
            Bearer token (blank if none is needed)
            <input
              type="password"
              autoComplete="off"
              value={form.bearer_token}
              onChange={(e) => set({ bearer_token: e.target.value })}
            />
          </label>
          <div>
            <label>
              Headers
              <textarea
                rows={3}
                aria-describedby={headersHint}
                placeholder="X-Tenant: acme"
                value={form.headers}
                onChange={(e) => set({ headers: e.target.value })}
              />
            </label>
            <p id={headersHint} className="hint field-hint">
              One <code>Name: value</code> per line, sent with every request to the server. Values and the token are
              stored encrypted and never shown again.
            </p>
          </div>
          {formError && <p role="alert">{formError}</p>}
        </AddAndProbeForm>
      </Section>
      <Section title="Your tool servers">
        <QueryView
          query={servers}
          what="your tool servers"
          empty={(page) => page.data.length === 0}
          emptyMessage={
            <p>No tool servers yet. Add one above and its tools are offered to your keys at the gateway&apos;s /mcp.</p>
          }
        >
          {(page) => (
            <Table<ToolServer>
              caption="MCP tool servers"
              rows={page.data}
              rowKey={(row) => row.id}
              columns={[
                { header: 'Label', cell: (row) => row.label },
                { header: 'Slug', cell: (row) => <code>{row.slug}</code> },
                { header: 'URL', cell: (row) => row.url },
                { header: 'Tools', cell: (row) => <ToolList server={row} /> },
                { header: 'Last probe', cell: (row) => <ToolProbe probe={row.probe} /> },
                {
                  header: 'Actions',
                  cell: (row) => (
                    <ProbedRowActions
                      label={row.label}
                      probing={probe.isPending}
                      onProbe={() => probe.mutate(row.slug, { onSuccess: setLast })}
                      onDelete={() => (remove.reset(), setDeleting(row))}
                    />
                  ),
                },
              ]}
            />
          )}
        </QueryView>
        {probe.error && <ErrorState error={probe.error} />}
      </Section>

      <ConfirmDialog
        open={!!deleting}
        title="Delete this tool server?"
        body={<p>{deleting?.label}: its stored credentials are removed and its tools leave /mcp at once.</p>}
        confirmLabel="Delete tool server"
        busy={remove.isPending}
        onConfirm={() => deleting && remove.mutate(deleting.slug, { onSuccess: () => setDeleting(undefined) })}
        onClose={() => setDeleting(undefined)}
      />
    </Page>
  );
}
