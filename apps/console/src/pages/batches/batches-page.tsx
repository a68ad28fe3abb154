import { useId, useState, type FormEvent } from 'react';
import type { Batch, BatchEndpoint, StoredFile } from '../../api/types';
import { count, dateTime } from '../../ui/format';
import { Page, Section } from '../../ui/page';
import { ErrorState, QueryView } from '../../ui/states';
import { ForwardPager, useForwardCursors } from '../../ui/forward-pager';
import { RowActionButton, RowActionDialog, useRowAction } from '../../ui/row-action';
import { Table } from '../../ui/table';
import {
  endpointOfFirstLine,
  ENDPOINTS,
  errorMessages,
  isCancellable,
  isoOf,
  progressText,
  STATUS_NAMES,
} from './batch-view';
import {
  useBatches,
  useBatchFiles,
  useCancelBatch,
  useCreateBatch,
  useDownloadFile,
  useUploadBatchFile,
} from './use-batches';
import { MessageBatchList, NewMessageBatch } from './message-batches';

/** How much of a chosen file is read for its first line's endpoint. */
const HEAD_BYTES = 64 * 1024;

const fileLabel = (file: StoredFile) => `${file.filename} (${file.id}, ${count(file.bytes)} B)`;

/** Upload a JSONL input file, then create a batch over it (or over one uploaded before). */
function NewBatch() {
  const files = useBatchFiles();
  const uploading = useUploadBatchFile();
  const creating = useCreateBatch();
  const [chosen, setChosen] = useState<File>();
  const [fileId, setFileId] = useState('');
  const [endpoint, setEndpoint] = useState<BatchEndpoint>('/v1/chat/completions');
  const formatHint = useId();
  const batchFiles = files.data?.data ?? [];
  const inputFileId = batchFiles.some((file) => file.id === fileId) ? fileId : (batchFiles[0]?.id ?? '');

  const choose = (file: File | undefined) => {
    uploading.reset();
    setChosen(file);
    if (file)
      void file
        .slice(0, HEAD_BYTES)
        .text()
        .then((head) => {
          const asked = endpointOfFirstLine(head);
          if (asked) setEndpoint(asked);
        });
  };
  const submitUpload = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (!chosen) return;
    const form = event.currentTarget;
    uploading.mutate(chosen, { onSuccess: (file) => (setFileId(file.id), form.reset(), setChosen(undefined)) });
  };
  const submitCreate = (event: FormEvent) => {
    event.preventDefault();
    creating.mutate({ input_file_id: inputFileId, endpoint });
  };

  return (
    <Section title="Start an OpenAI batch">
      <h3>1. Upload an input file</h3>
      <form onSubmit={submitUpload} aria-label="Upload an input file" className="stack">
        <div>
          <label>
            Input file (JSONL)
            <input
              type="file"
              required
              accept=".jsonl,.json,.txt,application/jsonl,application/x-ndjson,text/plain"
              aria-describedby={formatHint}
              onChange={(e) => choose(e.target.files?.[0])}
            />
          </label>
          <p id={formatHint} className="hint field-hint">
            One request per line: <code>{'{"custom_id": "q1", "method": "POST", "url": "/v1/chat/completions", '}</code>
            <code>{'"body": {"model": "house", "messages": [...]}}'}</code>. Each line is checked as it uploads.
          </p>
        </div>
        {uploading.error && <ErrorState error={uploading.error} />}
        <div className="actions">
          <button type="submit" disabled={uploading.isPending || !chosen}>
            {uploading.isPending ? 'Uploading…' : 'Upload'}
          </button>
        </div>
        <div aria-live="polite">
          {uploading.data && (
            <p role="status">
              Uploaded {uploading.data.filename} as <code>{uploading.data.id}</code>.
            </p>
          )}
        </div>
      </form>

      <h3>2. Create a batch over it</h3>
      <form onSubmit={submitCreate} aria-label="Create a batch" className="stack">
        <label>
          Input file
          <select value={inputFileId} onChange={(e) => setFileId(e.target.value)} disabled={batchFiles.length === 0}>
            {batchFiles.length === 0 && <option value="">Upload a file first</option>}
            {batchFiles.map((file) => (
              <option key={file.id} value={file.id}>
                {fileLabel(file)}
              </option>
            ))}
          </select>
        </label>
        {files.error && <ErrorState error={files.error} retry={() => void files.refetch()} />}
        <label>
          Endpoint (every line&apos;s url)
          <select value={endpoint} onChange={(e) => setEndpoint(e.target.value as BatchEndpoint)}>
            {ENDPOINTS.map((one) => (
              <option key={one.value} value={one.value}>
                {one.label} ({one.value})
              </option>
            ))}
          </select>
        </label>
        {creating.error && <ErrorState error={creating.error} />}
        <div className="actions">
          <button type="submit" disabled={creating.isPending || !inputFileId}>
            Create batch
          </button>
        </div>
        <div aria-live="polite">
          {creating.data && (
            <p role="status">
              Created <code>{creating.data.id}</code>: its lines run at low priority; follow it below.
            </p>
          )}
        </div>
      </form>
    </Section>
  );
}

function Status({ batch }: { batch: Batch }) {
  const errors = errorMessages(batch.errors);
  return (
    <>
      {STATUS_NAMES[batch.status]}
      {errors.length > 0 && (
        <ul className="plain bad">
          {errors.map((message) => (
            <li key={message}>{message}</li>
          ))}
        </ul>
      )}
    </>
  );
}

function Progress({ batch }: { batch: Batch }) {
  const { total, completed, failed } = batch.request_counts;
  return (
    <div className="progress">
      <progress max={Math.max(total, 1)} value={completed + failed} aria-label={`Progress of ${batch.id}`} />
      <span>{progressText(batch.request_counts)}</span>
    </div>
  );
}

/** A settled batch's files, each saved on a click; `—` until one is written (a file with no lines never is). */
function Results({ batch, busy, onDownload }: { batch: Batch; busy: boolean; onDownload: (fileId: string) => void }) {
  const files = [
    { id: batch.output_file_id, what: 'output', label: 'Output' },
    { id: batch.error_file_id, what: 'errors', label: 'Errors' },
  ].filter((file): file is { id: string; what: string; label: string } => !!file.id);
  if (files.length === 0) return <>—</>;
  return (
    <div className="actions">
      {files.map((file) => (
        <button
          key={file.what}
          type="button"
          aria-label={`Download the ${file.what} of ${batch.id}`}
          disabled={busy}
          onClick={() => onDownload(file.id)}
        >
          {file.label}
        </button>
      ))}
    </div>
  );
}

/** Every batch, newest first, with its progress; its files to download once written, cancel while it may. */
function BatchList() {
  const cursors = useForwardCursors();
  const batches = useBatches(cursors.after);
  const cancel = useRowAction<Batch>(useCancelBatch());
  const download = useDownloadFile();

  return (
    <Section title="Your OpenAI batches">
      <QueryView
        query={batches}
        what="your batches"
        empty={(page) => page.data.length === 0 && cursors.atStart}
        emptyMessage={<p>No batches yet. Upload an input file above and create one.</p>}
      >
        {(page) => (
          <>
            <Table<Batch>
              caption="OpenAI batches, newest first"
              rows={page.data}
              rowKey={(row) => row.id}
              columns={[
                { header: 'Created', cell: (row) => dateTime(isoOf(row.created_at)) },
                { header: 'Batch', cell: (row) => <code className="breakable">{row.id}</code> },
                { header: 'Endpoint', cell: (row) => <code>{row.endpoint}</code> },
                { header: 'Status', cell: (row) => <Status batch={row} /> },
                { header: 'Progress', cell: (row) => <Progress batch={row} /> },
                {
                  header: 'Results',
                  cell: (row) => (
                    <Results batch={row} busy={download.isPending} onDownload={(fileId) => download.mutate(fileId)} />
                  ),
                },
                {
                  header: 'Actions',
                  cell: (row) =>
                    isCancellable(row) ? <RowActionButton action={cancel} row={row} label="Cancel" /> : null,
                },
              ]}
            />
            <ForwardPager cursors={cursors} page={page} noun="batches" />
          </>
        )}
      </QueryView>
      {download.error && <ErrorState error={download.error} />}

      <RowActionDialog
        action={cancel}
        title="Cancel this batch?"
        confirmLabel="Cancel batch"
        what={(batch) => (
          <>
            {batch.id}: no new line starts; lines in flight finish, then it ends cancelled with what was done in its
            files.
          </>
        )}
      />
    </Section>
  );
}

/**
 * Both kinds of batch, each in its provider's shapes and sections: OpenAI batches (upload an input file, create a batch
 * over it, follow it, cancel it, download its files) and Anthropic message batches (send the requests, follow, cancel,
 * download the results, delete).
 */
export function BatchesPage() {
  return (
    <Page title="Batches">
      <p>
        Two kinds, each as its provider&apos;s API has it. <strong>OpenAI batches</strong> (<code>/v1/batches</code>)
        run an uploaded JSONL file against one endpoint. <strong>Anthropic message batches</strong> (
        <code>/v1/messages/batches</code>) take their requests in the create call, each a Messages call. Both run at low
        priority, each line billed as the same call would be; answered lines are marked <em>Batch</em> in the request
        log.
      </p>
      <NewBatch />
      <BatchList />
      <NewMessageBatch />
      <MessageBatchList />
    </Page>
  );
}
