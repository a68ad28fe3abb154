import { useState, type FormEvent } from 'react';
import type { WebhookEndpoint } from '../../api/types';
import { Link, useLocation } from '../../router/router';
import { ConfirmDialog } from '../../ui/dialog';
import { dateTime, ms } from '../../ui/format';
import { Section } from '../../ui/page';
import { ErrorState, QueryView } from '../../ui/states';
import { Table } from '../../ui/table';
import { useAddWebhook, useDeleteWebhook, useDeliveries, useResendDelivery, useWebhooks } from './use-runs';

type Delivery = NonNullable<ReturnType<typeof useDeliveries>['data']>['data'][number];

/** The signing secret of an endpoint just added: the API shows it in that one answer only. */
function SecretShownOnce({ secret, onDone }: { secret: string; onDone: () => void }) {
  return (
    <div role="status" className="secret">
      <p>Your webhook signing secret. It is shown this once: copy it now.</p>
      <label>
        Signing secret
        <input readOnly value={secret} onFocus={(e) => e.target.select()} />
      </label>
      <div className="actions">
        <button type="button" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}

const attemptsOf = (delivery: Delivery) =>
  delivery.attempts
    .map((attempt) => `#${attempt.attempt}: ${attempt.status_code ?? attempt.error ?? 'no answer'}`)
    .join(', ') || 'None yet';

function Deliveries({ webhook }: { webhook: WebhookEndpoint }) {
  const deliveries = useDeliveries(webhook.id);
  const resend = useResendDelivery();
  return (
    <>
      <QueryView
        query={deliveries}
        what="its deliveries"
        empty={(page) => page.data.length === 0}
        emptyMessage={<p>Nothing sent to {webhook.url} yet: a delivery is made when a run settles.</p>}
      >
        {(page) => (
          <Table<Delivery>
            caption={`Deliveries to ${webhook.url}`}
            rows={page.data}
            rowKey={(delivery) => delivery.id}
            columns={[
              { header: 'Event', cell: (delivery) => delivery.event_type },
              { header: 'Run', cell: (delivery) => <Link to={`runs?run=${delivery.run_id}`}>{delivery.run_id}</Link> },
              { header: 'Status', cell: (delivery) => delivery.status },
              { header: 'Attempts (status codes)', cell: attemptsOf },
              { header: 'Last took', cell: (delivery) => ms(delivery.attempts.at(-1)?.duration_ms) },
              { header: 'Next attempt', cell: (delivery) => dateTime(delivery.next_attempt_at) },
              {
                header: 'Actions',
                cell: (delivery) =>
                  // Only a failed delivery can be sent again (with webhook.disabled_at the API would refuse it).
                  delivery.status === 'failed' && !webhook.disabled_at ? (
                    <button
                      type="button"
                      aria-label={`Resend the ${delivery.event_type} delivery of ${delivery.run_id}`}
                      disabled={resend.isPending}
                      onClick={() => resend.mutate({ webhookId: webhook.id, deliveryId: delivery.id })}
                    >
                      Resend
                    </button>
                  ) : (
                    '—'
                  ),
              },
            ]}
          />
        )}
      </QueryView>
      {resend.error && <ErrorState error={resend.error} />}
    </>
  );
}

/** Webhook endpoints told when runs settle: add one, see each delivery's attempts, delete one. */
export function Webhooks() {
  const webhooks = useWebhooks();
  const add = useAddWebhook();
  const remove = useDeleteWebhook();
  const [url, setUrl] = useState('');
  const [secret, setSecret] = useState<string>();
  const [deleting, setDeleting] = useState<WebhookEndpoint>();
  const shown = useLocation().query.get('webhook');

  const submit = (event: FormEvent) => {
    event.preventDefault();
    add.mutate({ url: url.trim() }, { onSuccess: (created) => (setSecret(created.secret), setUrl('')) });
  };

  return (
    <Section title="Webhooks">
      <QueryView
        query={webhooks}
        what="your webhooks"
        empty={(page) => page.data.length === 0}
        emptyMessage={<p>No webhooks yet. Add one to be told when a run settles.</p>}
      >
        {(page) => (
          <>
            <Table<WebhookEndpoint>
              caption="Webhook endpoints"
              rows={page.data}
              rowKey={(webhook) => webhook.id}
              columns={[
                { header: 'URL', cell: (webhook) => <span className="breakable">{webhook.url}</span> },
                { header: 'Events', cell: (webhook) => webhook.events.join(', ') },
                {
                  header: 'State',
                  cell: (webhook) =>
                    webhook.disabled_at ? `Disabled: ${webhook.disabled_reason ?? 'gone'}` : 'Active',
                },
                {
                  header: 'Actions',
                  cell: (webhook) => (
                    <div className="actions">
                      <Link
                        to={`runs?webhook=${encodeURIComponent(webhook.id)}`}
                        aria-label={`Deliveries to ${webhook.url}`}
                        aria-current={webhook.id === shown || undefined}
                      >
                        Deliveries
                      </Link>
                      <button
                        type="button"
                        className="danger"
                        aria-label={`Delete the webhook ${webhook.url}`}
                        onClick={() => (remove.reset(), setDeleting(webhook))}
                      >
                        Delete
                      </button>
                    </div>
                  ),
                },
              ]}
            />
            {page.data
              .filter((webhook) => webhook.id === shown)
              .map((webhook) => (
                <Deliveries key={webhook.id} webhook={webhook} />
              ))}
          </>
        )}
      </QueryView>
      {secret ? (
        <SecretShownOnce secret={secret} onDone={() => setSecret(undefined)} />
      ) : (
        <form onSubmit={submit} aria-label="Add a webhook" className="row">
          <label>
            Webhook URL
            <input type="url" required maxLength={2_048} value={url} onChange={(e) => setUrl(e.target.value)} />
          </label>
          <button type="submit" disabled={add.isPending || !url.trim()}>
            Add webhook
          </button>
        </form>
      )}
      {add.error && <ErrorState error={add.error} />}
      <ConfirmDialog
        open={!!deleting}
        title="Delete this webhook?"
        body={
          <>
            <p>
              Nothing more is sent to <strong className="breakable">{deleting?.url}</strong>; deliveries still pending
              are dropped.
            </p>
            {remove.error && <ErrorState error={remove.error} />}
          </>
        }
        confirmLabel="Delete webhook"
        busy={remove.isPending}
        onConfirm={() => deleting && remove.mutate(deleting.id, { onSuccess: () => setDeleting(undefined) })}
        onClose={() => setDeleting(undefined)}
      />
    </Section>
  );
}
