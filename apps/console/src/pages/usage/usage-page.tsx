import { useMemo, useRef, useState } from 'react';
import { withQuery } from '../../api/client';
import type { UsageBreakdown } from '../../api/types';
import { browserTimeZone, count, localDay, usd, usdTicks } from '../../ui/format';
import { Page, Section } from '../../ui/page';
import { StackedChart } from '../../ui/stacked-chart';
import { QueryView } from '../../ui/states';
import { Table } from '../../ui/table';
import { breakdownSeries, METRICS, type Metric } from './breakdown';
import { RequestLog } from './request-log';
import { exclusiveEnd, useBreakdown } from './use-usage';

// `upstream` is the API's name for a grouping by endpoint; the console calls it an endpoint (api/routes.ts).
const GROUPS = { model: 'Model', key: 'Key', provider: 'Provider', upstream: 'Endpoint' } as const;
type Group = keyof typeof GROUPS;
const ZONES = [
  ...new Set([browserTimeZone(), 'UTC', 'America/New_York', 'Europe/London', 'Europe/Berlin', 'Asia/Tokyo']),
];

type Row = UsageBreakdown['groups'][number];

function BreakdownView({ breakdown, metric, group }: { breakdown: UsageBreakdown; metric: Metric; group: Group }) {
  const dataArrived = useRef(performance.now());
  const { times, series } = useMemo(() => {
    dataArrived.current = performance.now();
    return breakdownSeries(breakdown, metric);
  }, [breakdown, metric]);
  const format = metric === 'usd' ? usd : count;
  const totals = breakdown.totals;
  return (
    <>
      <StackedChart
        title={`${METRICS[metric].label} per ${breakdown.bucket}, stacked by ${GROUPS[group].toLowerCase()}`}
        times={times}
        series={series}
        unit={METRICS[metric].unit}
        format={format}
        formatAxis={metric === 'usd' ? usdTicks : undefined}
        // Measured for the budget bench (bench/console.mjs): data in hand to the next frame after the chart drew.
        onDrawn={() =>
          requestAnimationFrame(() =>
            performance.measure('usage-draw', { start: dataArrived.current, end: performance.now() }),
          )
        }
      />
      <Table<Row>
        caption={`Breakdown by ${GROUPS[group].toLowerCase()}`}
        columns={[
          { header: GROUPS[group], cell: (row) => row.label || row.id },
          { header: 'Requests', cell: (row) => count(row.requests), numeric: true },
          { header: 'Tokens in', cell: (row) => count(row.tokens_in), numeric: true },
          { header: 'Tokens out', cell: (row) => count(row.tokens_out), numeric: true },
          { header: 'Credits', cell: (row) => count(row.tokens), numeric: true },
          { header: 'Cost', cell: (row) => usd(row.usd), numeric: true },
        ]}
        rows={breakdown.groups}
        rowKey={(row) => row.id}
        footer={
          <tr>
            <th scope="row">Total</th>
            <td className="num" data-total="requests">
              {count(totals.requests)}
            </td>
            <td className="num">{count(totals.tokens_in)}</td>
            <td className="num">{count(totals.tokens_out)}</td>
            <td className="num">{count(totals.tokens)}</td>
            <td className="num">{usd(totals.usd)}</td>
          </tr>
        }
      />
    </>
  );
}

/** Usage over a window: the stacked chart, the breakdown table, exports and the per-request log. */
export function UsagePage() {
  const today = localDay(new Date());
  const [from, setFrom] = useState(localDay(new Date(), 29));
  const [to, setTo] = useState(today);
  const [tz, setTz] = useState(ZONES[0]!);
  const [bucket, setBucket] = useState<'day' | 'hour'>('day');
  const [group, setGroup] = useState<Group>('model');
  const [metric, setMetric] = useState<Metric>('requests');
  const breakdown = useBreakdown({ from, to, tz, bucket, group });
  const exportHref = (format: 'csv' | 'jsonl') => withQuery('/v1/usage/export', { from, to: exclusiveEnd(to), format });

  return (
    <Page
      title="Usage"
      actions={
        <div className="actions">
          <a className="button" href={exportHref('csv')} download={`usage-${from}-${to}.csv`}>
            Export CSV
          </a>
          <a className="button" href={exportHref('jsonl')} download={`usage-${from}-${to}.jsonl`}>
            Export JSONL
          </a>
        </div>
      }
    >
      <form className="filters" aria-label="Usage window" onSubmit={(e) => e.preventDefault()}>
        <label>
          From
          <input
            type="date"
            value={from}
            max={to}
            required
            onChange={(e) => e.target.value && setFrom(e.target.value)}
          />
        </label>
        <label>
          To
          <input type="date" value={to} min={from} required onChange={(e) => e.target.value && setTo(e.target.value)} />
        </label>
        <label>
          Time zone
          <select value={tz} onChange={(e) => setTz(e.target.value)}>
            {ZONES.map((zone) => (
              <option key={zone}>{zone}</option>
            ))}
          </select>
        </label>
        <label>
          Buckets
          <select value={bucket} onChange={(e) => setBucket(e.target.value as 'day' | 'hour')}>
            <option value="day">Days</option>
            <option value="hour">Hours</option>
          </select>
        </label>
        <label>
          Group by
          <select value={group} onChange={(e) => setGroup(e.target.value as Group)}>
            {Object.entries(GROUPS).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Measure
          <select value={metric} onChange={(e) => setMetric(e.target.value as Metric)}>
            {Object.entries(METRICS).map(([value, { label }]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
      </form>
      <Section title="Breakdown">
        <QueryView
          query={breakdown}
          what="usage"
          empty={(data) => data.totals.requests === 0}
          emptyMessage={<p>No calls in this window yet. Make a model call with one of your keys and it shows here.</p>}
        >
          {(data) => <BreakdownView breakdown={data} metric={metric} group={group} />}
        </QueryView>
      </Section>
      <RequestLog />
    </Page>
  );
}
