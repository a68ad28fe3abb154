import type { Credits } from '../../api/types';
import { count, dateTime, usd } from '../../ui/format';
import { Page, Section } from '../../ui/page';
import { QueryView } from '../../ui/states';
import { Table } from '../../ui/table';
import { useCredits } from '../../hooks/use-credits';

const POTS = {
  beta: 'Beta (Free plan, refilled monthly)',
  plan: 'Plan (resets monthly)',
  permanent: 'Packs and grants (never expire)',
} as const;
type PotRow = { id: keyof typeof POTS; granted?: number; used?: number; remaining: number; expires_at?: string };

function potRows(credits: Credits): PotRow[] {
  return (Object.keys(POTS) as (keyof typeof POTS)[]).map((id) => ({
    id,
    remaining: credits.credits[id],
    ...credits.credits.pots?.[id],
  }));
}

/** Credits and plan: each pot, this period's use against capacity, and the renewal date. */
export function CreditsPage() {
  const credits = useCredits();
  return (
    <Page title="Credits and plan">
      <QueryView query={credits} what="your credits">
        {(data) => (
          <>
            <dl className="tiles">
              <div>
                <dt>Plan</dt>
                <dd>{data.plan}</dd>
              </div>
              <div>
                <dt>Balance</dt>
                <dd>{count(data.balance_credits)} credits</dd>
              </div>
              <div>
                <dt>Renews</dt>
                <dd>{data.renews_at ? dateTime(data.renews_at) : 'No renewal'}</dd>
              </div>
            </dl>
            <Section title="This period">
              <label className="meter">
                Used {count(data.period_usage_tokens)} of {count(data.capacity_tokens)} credits
                <meter min={0} max={Math.max(data.capacity_tokens, 1)} value={data.period_usage_tokens} />
              </label>
              {data.overage && (
                <p>
                  Overage: {count(data.overage.used_credits)} of {count(data.overage.limit_credits)} credits (
                  {usd(data.overage.usd)}).
                </p>
              )}
              <p>
                This week: {usd(data.paid_usd_week)} paid, {usd(data.list_usd_week)} at list price,{' '}
                {usd(data.saved_usd_week)} saved.
              </p>
            </Section>
            <Section title="Pots">
              <Table<PotRow>
                caption="Credit pots, spent in this order"
                rows={potRows(data)}
                rowKey={(row) => row.id}
                columns={[
                  { header: 'Pot', cell: (row) => POTS[row.id] },
                  {
                    header: 'Granted',
                    cell: (row) => (row.granted === undefined ? '—' : count(row.granted)),
                    numeric: true,
                  },
                  { header: 'Used', cell: (row) => (row.used === undefined ? '—' : count(row.used)), numeric: true },
                  { header: 'Remaining', cell: (row) => count(row.remaining), numeric: true },
                  { header: 'Expires', cell: (row) => (row.expires_at ? dateTime(row.expires_at) : 'Never') },
                ]}
              />
            </Section>
          </>
        )}
      </QueryView>
    </Page>
  );
}
