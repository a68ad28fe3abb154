import { useId, useState, type FormEvent } from 'react';
import { ApiFailure } from '../../api/client';
import type { MessageBatch } from '../../api/types';
import { dateTime } from '../../ui/format';
import { Section } from '../../ui/page';
import { ErrorState, QueryView } from '../../ui/states';
import { ForwardPager, useForwardCursors } from '../../ui/forward-pager';
import { RowActionButton, RowActionDialog, useRowAction } from '../../ui/row-action';
import { Table } from '../../ui/table';
import {
  countsText,
  hasEnded,
  isCancellable,
  PROCESSING_STATUS_NAMES,
  readRequests,
  whereOf,
} from './message-batch-view';
import {
  useCancelMessageBatch,
  useCreateMessageBatch,
  useDeleteMessageBatch,
  useDownloadMessageBatchResults,
  useMessageBatches,
} from './use-message-batches';

/** The create body the API takes (libs/api MESSAGE_BATCH_MAX_BODY_BYTES): a larger file is not worth reading in. */
const MAX_BODY_BYTES = 32 * 1024 * 1024;

/** The place of the first problem a refused create names, in the person's terms (a line, a request). */
function whereRefused(error: unknown, lines: number[] | undefined): string | undefined {
  if (!(error instanceof ApiFailure)) return undefined;
  return error.issues.map((issue) => whereOf(issue.path, lines)).find((where) => where !== undefined);
}

/** Paste the requests or choose a file of them; they are sent in the create call, as Anthropic's API takes them. */
export function NewMessageBatch() {
  const creating = useCreateMessageBatch();
  const [text, setText] = useState('');
  const [problem, setProblem] = useState<string>();
  // The line each sent request was on, to name the one a refusal is about.
  const [lines, setLines] = useState<number[]>();
  const formatHint = useId();
  const requestsBox = useId();

  const choose = (file: File | undefined) => {
    creating.reset();
    setProblem(undefined);
    if (!file) return;
    if (file.size > MAX_BODY_BYTES) {
      setProblem(`${file.name} is larger than 32 MiB, the most one create may send.`);
      return;
    }
    void file.text().then(setText);
  };
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    creating.reset();
    const read = readRequests(text);
    if ('problem' in read) {
      setProblem(read.problem);
      return;
    }
    setProblem(undefined);
    setLines(read.lines);
    // The file chosen is cleared too, so choosing it again reads it again.
    creating.mutate(read.requests, { onSuccess: () => (form.reset(), setText('')) });
  };

  return (
    <Section title="Start an Anthropic message batch">
      <form onSubmit={submit} aria-label="Create a message batch" className="stack">
        <label>
          Requests file (JSONL or JSON)
          <input
            type="file"
            accept=".jsonl,.json,.txt,application/jsonl,application/x-ndjson,application/json,text/plain"
            aria-describedby={formatHint}
            onChange={(e) => choose(e.target.files?.[0])}
          />
        </label>
        <div>
          {/* Beside, not around, the box: a label around it would take the box's text into the box's name. */}
          <label htmlFor={requestsBox}>Requests</label>
          <textarea
            id={requestsBox}
            rows={6}
            spellCheck={false}
            value={text}
            aria-describedby={formatHint}
            onChange={(e) => (setText(e.target.value), setProblem(undefined))}
          />
          <p id={formatHint} className="hint field-hint">
            One request per line, <code>{'{"custom_id": "q1", "params": {"model": "house", "max_tokens": 256, '}</code>
            <code>{'"messages": [...]}}'}</code>, or a JSON array of them; a file chosen fills this box. Each{' '}
            <code>params</code> is a Messages call&apos;s body, run as a <code>/v1/messages</code> call.
          </p>
        </div>
        {problem && (
          <div role="alert" className="state error">
            <p>{problem}</p>
          </div>
        )}
        {creating.error && <ErrorState error={creating.error} where={whereRefused(creating.error, lines)} />}
        <div className="actions">
          <button type="submit" disabled={creating.isPending || text.trim() === ''}>
            {creating.isPending ? 'Creating…' : 'Create message batch'}
          </button>
        </div>
        <div aria-live="polite">
          {creating.data && (
            <p role="status">
              Created <code>{creating.data.id}</code>: its requests run at low priority; follow it below.
            </p>
          )}
        </div>
      </form>
    </Section>
  );
}

function Progress({ batch }: { batch: MessageBatch }) {
  const counts = batch.request_counts;
  const total = counts.processing + counts.succeeded + counts.errored + counts.canceled + counts.expired;
  return (
    <div className="progress">
      <progress max={Math.max(total, 1)} value={total - counts.processing} aria-label={`Progress of ${batch.id}`} />
      <span>{countsText(counts)}</span>
    </div>
  );
}

/** Every message batch, newest first, with its counts; results to download and delete once ended, cancel before. */
export function MessageBatchList() {
  const cursors = useForwardCursors();
  const batches = useMessageBatches(cursors.after);
  const cancel = useRowAction<MessageBatch>(useCancelMessageBatch());
  const remove = useRowAction<MessageBatch>(useDeleteMessageBatch());
  const download = useDownloadMessageBatchResults();

  return (
    <Section title="Your Anthropic message batches">
      <QueryView
        query={batches}
        what="your message batches"
        empty={(page) => page.data.length === 0 && cursors.atStart}
        emptyMessage={<p>No message batches yet. Paste their requests above and create one.</p>}
      >
        {(page) => (
          <>
            <Table<MessageBatch>
              caption="Message batches, newest first"
              rows={page.data}
              rowKey={(row) => row.id}
              columns={[
                { header: 'Created', cell: (row) => dateTime(row.created_at) },
                { header: 'Message batch', cell: (row) => <code className="breakable">{row.id}</code> },
                { header: 'Status', cell: (row) => PROCESSING_STATUS_NAMES[row.processing_status] },
                { header: 'Progress', cell: (row) => <Progress batch={row} /> },
                {
                  header: 'Results',
                  cell: (row) =>
                    hasEnded(row) ? (
                      <button
                        type="button"
                        aria-label={`Download the results of ${row.id}`}
                        disabled={download.isPending}
                        onClick={() => download.mutate(row.id)}
                      >
                        Results
                      </button>
                    ) : (
                      '—'
                    ),
                },
                {
                  header: 'Actions',
                  cell: (row) =>
                    isCancellable(row) ? (
                      <RowActionButton action={cancel} row={row} label="Cancel" />
                    ) : hasEnded(row) ? (
                      <RowActionButton action={remove} row={row} label="Delete" />
                    ) : null,
                },
              ]}
            />
            <ForwardPager cursors={cursors} page={page} noun="message batches" />
          </>
        )}
      </QueryView>
      {download.error && <ErrorState error={download.error} />}

      <RowActionDialog
        action={cancel}
        title="Cancel this message batch?"
        confirmLabel="Cancel message batch"
        what={(batch) => (
          <>
            {batch.id}: no new request starts; requests in flight finish, then it ends with the rest{' '}
            <code>canceled</code> in its results.
          </>
        )}
      />
      <RowActionDialog
        action={remove}
        title="Delete this message batch?"
        confirmLabel="Delete message batch"
        what={(batch) =>
          `${batch.id} and its results are deleted for good. Its calls stay in the request log and on the bill.`
        }
      />
    </Section>
  );
}
