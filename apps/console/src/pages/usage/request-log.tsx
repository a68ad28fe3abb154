import { useState } from 'react';
import type { UsageGeneration } from '../../api/types';
import { count, dateTime, ms, usd } from '../../ui/format';
import { Section } from '../../ui/page';
import { QueryView } from '../../ui/states';
import { Table, type Column } from '../../ui/table';
import { useKeys } from '../../hooks/use-keys';
import { CallDetail } from './call-detail';
import { batchLineOf, callKind, KIND_NAMES, toolOf, type CallKind } from './call-kind';
import { useRequestLog, type LogFilters } from './use-usage';
import { DayRangeFields } from '../../ui/day-range';

/** The model called, or for a tool call the tool and its server; a batch line says it is one. */
function CalledCell({ row }: { row: UsageGeneration }) {
  const tool = toolOf(row);
  if (tool)
    return (
      <>
        <span className="tag">Tool call</span> <code className="breakable">{tool.tool}</code> on{' '}
        <code className="breakable">{tool.server}</code>
      </>
    );
  const line = batchLineOf(row);
  return (
    <>
      {row.model}
      {line && (
        <>
          {' '}
          <span className="tag" title={`Line ${line.line} of ${line.batchId}`}>
            Batch
          </span>
        </>
      )}
    </>
  );
}

/** Token and time-to-first-token figures: a tool call has none, which is not zero of them. */
const modelFigure = (row: UsageGeneration, figure: string) => (toolOf(row) ? '—' : figure);

const columns = (open: (row: UsageGeneration) => void): Column<UsageGeneration>[] => [
  {
    header: 'Time',
    cell: (row) => (
      <button
        type="button"
        className="link"
        onClick={() => open(row)}
        aria-label={`Details of the call at ${dateTime(row.ts)}`}
      >
        {dateTime(row.ts)}
      </button>
    ),
  },
  { header: 'Model', cell: (row) => <CalledCell row={row} /> },
  // A target id (`provider:openai/east`) may be longer than a phone's column: it breaks at its separators.
  { header: 'Served by', cell: (row) => (row.served_by ? <code className="breakable">{row.served_by}</code> : '—') },
  { header: 'Key', cell: (row) => row.key_label ?? row.key_id ?? '(session)' },
  { header: 'Status', cell: (row) => row.status, numeric: true },
  { header: 'Attempts', cell: (row) => row.attempts, numeric: true },
  // A reply replayed from the response cache: no upstream called, nothing charged.
  { header: 'Cache', cell: (row) => (row.cache_hit ? 'Hit' : '—') },
  {
    // The guardrail that acted on the call, and how: a block is the call's refusal (status 400).
    header: 'Guardrail',
    cell: (row) =>
      row.guardrail ? (
        <span title={row.guardrail.id}>
          {row.guardrail.action === 'block' ? 'Blocked' : row.guardrail.action === 'redact' ? 'Redacted' : 'Logged'}
        </span>
      ) : (
        '—'
      ),
  },
  { header: 'Tokens in', cell: (row) => modelFigure(row, count(row.native_tokens_prompt)), numeric: true },
  { header: 'Tokens out', cell: (row) => modelFigure(row, count(row.native_tokens_completion)), numeric: true },
  { header: 'Latency', cell: (row) => ms(row.latency_ms), numeric: true },
  { header: 'Time to first token', cell: (row) => modelFigure(row, ms(row.ttft_ms)), numeric: true },
  { header: 'Cost', cell: (row) => usd(row.total_cost_usd), numeric: true },
];

/**
 * Every call, newest first, a page at a time, filtered by key, model, kind, status and days; a call's time opens
 * it. Model calls, batch lines and MCP tool calls are all calls here, each marked as what it is.
 */
export function RequestLog() {
  const [filters, setFilters] = useState<LogFilters>({});
  const [cursor, setCursor] = useState<{ after_id?: string; before_id?: string }>({});
  const log = useRequestLog(filters, cursor);
  const [opened, setOpened] = useState<UsageGeneration>();
  const keys = useKeys();
  const change = (patch: Partial<LogFilters>) => {
    setFilters({ ...filters, ...patch });
    setCursor({});
  };
  const shown = (rows: UsageGeneration[]) =>
    rows.filter(
      (row) =>
        (!filters.status || (filters.status === 'error' ? row.status >= 400 : row.status < 400)) &&
        (!filters.kind || callKind(row) === filters.kind),
    );

  return (
    <Section title="Request log">
      <form className="filters" aria-label="Request log filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Key
          <select value={filters.key_id ?? ''} onChange={(e) => change({ key_id: e.target.value || undefined })}>
            <option value="">Any key</option>
            {keys.data?.data.map((key) => (
              <option key={key.id} value={key.id}>
                {key.name} ({key.mask})
              </option>
            ))}
          </select>
        </label>
        <label>
          Model
          <input
            type="search"
            value={filters.model ?? ''}
            onChange={(e) => change({ model: e.target.value || undefined })}
            placeholder="any model"
          />
        </label>
        <label>
          Kind
          <select
            value={filters.kind ?? ''}
            onChange={(e) => change({ kind: (e.target.value || undefined) as CallKind | undefined })}
          >
            <option value="">Any kind</option>
            {(Object.keys(KIND_NAMES) as CallKind[]).map((kind) => (
              <option key={kind} value={kind}>
                {KIND_NAMES[kind]}
              </option>
            ))}
          </select>
        </label>
        <label>
          Status
          <select
            value={filters.status ?? ''}
            onChange={(e) => change({ status: (e.target.value || undefined) as LogFilters['status'] })}
          >
            <option value="">Any status</option>
            <option value="ok">Succeeded</option>
            <option value="error">Failed</option>
          </select>
        </label>
        <DayRangeFields from={filters.from} to={filters.to} onChange={change} />
      </form>
      <QueryView
        query={log}
        what="the request log"
        empty={(page) => shown(page.data).length === 0 && !page.has_more && !cursor.after_id && !cursor.before_id}
        emptyMessage={<p>No calls match these filters.</p>}
      >
        {(page) => (
          <>
            <Table
              caption="Calls, newest first"
              columns={columns(setOpened)}
              rows={shown(page.data)}
              rowKey={(row) => row.id}
            />
            <div className="pager">
              <button
                type="button"
                disabled={!cursor.after_id && !(cursor.before_id && page.has_more)}
                onClick={() => setCursor({ before_id: page.first_id ?? undefined })}
              >
                Newer calls
              </button>
              <button
                type="button"
                disabled={cursor.before_id ? false : !page.has_more}
                onClick={() => setCursor({ after_id: page.last_id ?? undefined })}
              >
                Older calls
              </button>
            </div>
          </>
        )}
      </QueryView>
      <CallDetail call={opened} onClose={() => setOpened(undefined)} />
    </Section>
  );
}
