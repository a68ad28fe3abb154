import { useMemo } from 'react';
import { useApiQuery } from '../../api/queries';
import { getSpend } from '../../api/routes';
import type { Spend } from '../../api/types';
import { dateTime, usd, usdTicks } from '../../ui/format';
import { Page, Section } from '../../ui/page';
import { StackedChart } from '../../ui/stacked-chart';
import { QueryView } from '../../ui/states';
import { Table } from '../../ui/table';
import { spendSeries } from './spend-series';

type Provider = Spend['providers'][number];
const STATUS = { caught_up: 'Caught up', residual: 'Partly estimated', estimate_only: 'Estimated only' } as const;

function SpendView({ spend }: { spend: Spend }) {
  const { times, series } = useMemo(() => spendSeries(spend), [spend]);
  return (
    <>
      <dl className="tiles">
        <div>
          <dt>Total</dt>
          <dd>{usd(spend.total_usd)}</dd>
        </div>
        <div>
          <dt>Backed by a bill</dt>
          <dd>{usd(spend.tied_usd)}</dd>
        </div>
        <div>
          <dt>Estimated</dt>
          <dd>{usd(spend.estimated_usd)}</dd>
        </div>
      </dl>
      <StackedChart
        title="Spend per day, stacked by provider"
        times={times}
        series={series}
        unit="USD"
        format={usd}
        formatAxis={usdTicks}
      />
      <Section title="Providers">
        <Table<Provider>
          caption="Spend per provider, with each source's freshness"
          rows={spend.providers}
          rowKey={(row) => row.provider}
          columns={[
            { header: 'Provider', cell: (row) => row.label || row.provider },
            { header: 'Total', cell: (row) => usd(row.total_usd), numeric: true },
            { header: 'Measured', cell: (row) => usd(row.measured_usd), numeric: true },
            { header: 'Estimated', cell: (row) => usd(row.estimated_usd), numeric: true },
            { header: 'Status', cell: (row) => STATUS[row.status] },
            {
              header: 'Sources',
              cell: (row) =>
                row.sources.length === 0 ? (
                  'Usage × list price'
                ) : (
                  <ul className="plain">
                    {row.sources.map((source) => (
                      <li key={source.source}>
                        {source.source}: {source.status}, fresh {source.fresh_at ? dateTime(source.fresh_at) : 'never'}
                      </li>
                    ))}
                  </ul>
                ),
            },
          ]}
        />
        {spend.unpriced_models.length > 0 && (
          <p>Models without a list price (not counted): {spend.unpriced_models.join(', ')}.</p>
        )}
      </Section>
    </>
  );
}

/** AI spend across providers: the per-day series and each source's freshness and status. */
export function SpendPage() {
  const spend = useApiQuery(getSpend, {});
  return (
    <Page title="Spend">
      <QueryView
        query={spend}
        what="spend"
        empty={(data) => data.providers.length === 0}
        emptyMessage={<p>No spend in the last 30 days.</p>}
      >
        {(data) => <SpendView spend={data} />}
      </QueryView>
    </Page>
  );
}
