import type { ReactNode } from 'react';
import { Link } from '../../router/router';
import { count, localDay, ms, usd } from '../../ui/format';
import { Page, Section } from '../../ui/page';
import { ErrorState, Loading } from '../../ui/states';
import { Table } from '../../ui/table';
import { useCredits } from '../../hooks/use-credits';
import { percentile } from './percentile';
import { firstOfMonth, useReport, useTodaysCalls } from './use-overview';

type Loadable<T> = { data: T | undefined; error: unknown; isPending: boolean; refetch: () => unknown };

/** One figure with its own loading and error state, linking to the page that explains it. */
function Tile<T>({
  label,
  query,
  to,
  children,
}: {
  label: string;
  query: Loadable<T>;
  to: string;
  children: (data: T) => ReactNode;
}) {
  return (
    <li className="tile">
      <Link to={to}>{label}</Link>
      {query.isPending ? (
        <Loading what={label.toLowerCase()} />
      ) : query.error || !query.data ? (
        <ErrorState error={query.error} retry={() => void query.refetch()} />
      ) : (
        <p className="figure">{children(query.data)}</p>
      )}
    </li>
  );
}

/** This month's spend and credits, today's requests, errors and latency, and the top models. */
export function OverviewPage() {
  const month = useReport(firstOfMonth(new Date()));
  const today = useReport(localDay(new Date()));
  const calls = useTodaysCalls();
  const credits = useCredits();
  const latencies = (calls.data?.data ?? []).flatMap((call) =>
    call.latency_ms === undefined ? [] : [call.latency_ms],
  );

  return (
    <Page title="Overview">
      <ul className="tiles" aria-label="Figures">
        <Tile label="Spend this month" query={month} to="usage">
          {(report) => usd(report.totals.usd)}
        </Tile>
        <Tile label="Credits left" query={credits} to="credits">
          {(data) => `${count(data.balance_credits)} credits`}
        </Tile>
        <Tile label="Requests today" query={today} to="usage">
          {(report) => count(report.totals.requests)}
        </Tile>
        <Tile label="Errors today" query={today} to="usage">
          {(report) => count(report.failed_requests)}
        </Tile>
        <Tile label="Latency today" query={calls} to="usage">
          {() =>
            latencies.length
              ? `p50 ${ms(percentile(latencies, 50))}, p95 ${ms(percentile(latencies, 95))}`
              : 'No calls yet'
          }
        </Tile>
      </ul>
      <Section title="Top models this month">
        {month.isPending ? (
          <Loading what="top models" />
        ) : month.error || !month.data ? (
          <ErrorState error={month.error} retry={() => void month.refetch()} />
        ) : month.data.top_models.length === 0 ? (
          <p>
            No calls this month yet. <Link to="keys">Mint a key</Link> and make a call.
          </p>
        ) : (
          <Table
            caption="Top models this month"
            rows={month.data.top_models}
            rowKey={(row) => row.id}
            columns={[
              { header: 'Model', cell: (row) => row.label || row.id },
              { header: 'Requests', cell: (row) => count(row.requests), numeric: true },
              { header: 'Cost', cell: (row) => usd(row.usd), numeric: true },
            ]}
          />
        )}
        <p>
          <Link to="usage">All usage</Link>
        </p>
      </Section>
    </Page>
  );
}
