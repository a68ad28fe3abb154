import type { Batch, BatchEndpoint, BatchStatus } from '../../api/types';

export const ENDPOINTS: { value: BatchEndpoint; label: string }[] = [
  { value: '/v1/chat/completions', label: 'Chat completions' },
  { value: '/v1/responses', label: 'Responses' },
  { value: '/v1/embeddings', label: 'Embeddings' },
];

export const STATUS_NAMES: Record<BatchStatus, string> = {
  validating: 'Validating',
  failed: 'Failed',
  in_progress: 'In progress',
  finalizing: 'Finalizing',
  completed: 'Completed',
  expired: 'Expired',
  cancelling: 'Cancelling',
  cancelled: 'Cancelled',
};

/** Still moving by itself: its row is read again until it settles. */
export const isOpen = (batch: Pick<Batch, 'status'>) =>
  batch.status === 'validating' ||
  batch.status === 'in_progress' ||
  batch.status === 'finalizing' ||
  batch.status === 'cancelling';

/** What cancel applies to: a batch that may still start lines (the API refuses the rest). */
export const isCancellable = (batch: Pick<Batch, 'status'>) =>
  batch.status === 'validating' || batch.status === 'in_progress';

/** Lines answered out of all, in words: `2 of 3 done, 1 failed`. */
export function progressText({ total, completed, failed }: Batch['request_counts']): string {
  const done = `${(completed + failed).toLocaleString('en-US')} of ${total.toLocaleString('en-US')} done`;
  return failed > 0 ? `${done}, ${failed.toLocaleString('en-US')} failed` : done;
}

/** The messages of a failed batch's `errors` (OpenAI's `{data: [{message, line?}]}`), one per problem. */
export function errorMessages(errors: unknown): string[] {
  const data = (errors as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return [];
  return data.flatMap((entry: unknown) => {
    const { message, line } = (entry ?? {}) as { message?: unknown; line?: unknown };
    if (typeof message !== 'string') return [];
    return [typeof line === 'number' ? `line ${line}: ${message}` : message];
  });
}

/**
 * The endpoint a JSONL batch file's first line asks for, read from the file's head before it is uploaded, so the
 * create form starts on the endpoint every line must share; undefined when the first line does not say.
 */
export function endpointOfFirstLine(head: string): BatchEndpoint | undefined {
  const first = head.split(/\r?\n/).find((line) => line.trim() !== '');
  if (!first) return undefined;
  try {
    const url = (JSON.parse(first) as { url?: unknown }).url;
    return ENDPOINTS.find((endpoint) => endpoint.value === url)?.value;
  } catch {
    return undefined;
  }
}

/** A batch's Unix-seconds timestamp as the console's date-time formatter takes it. */
export const isoOf = (seconds: number | null) =>
  seconds === null ? undefined : new Date(seconds * 1000).toISOString();
