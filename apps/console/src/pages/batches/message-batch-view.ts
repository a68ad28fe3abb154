import type { MessageBatch, MessageBatchCounts } from '../../api/types';

export const PROCESSING_STATUS_NAMES: Record<MessageBatch['processing_status'], string> = {
  in_progress: 'In progress',
  canceling: 'Canceling',
  ended: 'Ended',
};

/** Still moving by itself: the list is read again until every batch on it has ended. */
export const isProcessing = (batch: Pick<MessageBatch, 'processing_status'>) => batch.processing_status !== 'ended';
/** What cancel applies to; a batch already canceling has nothing left to stop. */
export const isCancellable = (batch: Pick<MessageBatch, 'processing_status'>) =>
  batch.processing_status === 'in_progress';
/** Results are read, and a batch deleted, only once it has ended (the API answers 409 before). */
export const hasEnded = (batch: Pick<MessageBatch, 'processing_status'>) => batch.processing_status === 'ended';

const OUTCOMES = ['succeeded', 'errored', 'canceled', 'expired'] as const;

/** Requests out of all that have an outcome, then each outcome there is: `3 of 4 done: 2 succeeded, 1 errored`. */
export function countsText(counts: MessageBatchCounts): string {
  const done = OUTCOMES.reduce((sum, outcome) => sum + counts[outcome], 0);
  const total = done + counts.processing;
  const outcomes = OUTCOMES.filter((outcome) => counts[outcome] > 0).map(
    (outcome) => `${counts[outcome].toLocaleString('en-US')} ${outcome}`,
  );
  const head = `${done.toLocaleString('en-US')} of ${total.toLocaleString('en-US')} done`;
  return outcomes.length > 0 ? `${head}: ${outcomes.join(', ')}` : head;
}

/**
 * The requests of a create, read from what the person pasted or chose: a JSON array of `{custom_id, params}`, the
 * create body itself (`{"requests": [...]}`), or JSONL with one request a line (blank lines skipped). `lines[i]` is
 * the line request `i` was on, for JSONL, so a refusal can name it. Only the form is checked here; what each request
 * holds is the API's to judge, and its refusal is shown as it says it.
 */
export type ReadRequests = { requests: object[]; lines?: number[] } | { problem: string };

const isObject = (value: unknown): value is object =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function readRequests(text: string): ReadRequests {
  if (text.trim() === '') return { problem: 'Paste the requests or choose a file of them.' };
  const whole = parsed(text);
  if (whole.ok) {
    const value = whole.value;
    const list = Array.isArray(value)
      ? value
      : isObject(value) && Array.isArray((value as { requests?: unknown }).requests)
        ? (value as { requests: unknown[] }).requests
        : undefined;
    if (list) {
      const bad = list.findIndex((entry) => !isObject(entry));
      if (bad >= 0) return { problem: `Request ${bad + 1} is not an object of {"custom_id", "params"}.` };
      if (list.length === 0) return { problem: 'The list holds no request.' };
      return { requests: list as object[] };
    }
    // One request, perhaps over several lines.
    if (isObject(value)) return { requests: [value], lines: [text.split(/\r?\n/).findIndex((row) => row.trim()) + 1] };
  }
  // JSONL, one request a line.
  const requests: object[] = [];
  const lines: number[] = [];
  const rows = text.split(/\r?\n/);
  for (const [index, row] of rows.entries()) {
    if (row.trim() === '') continue;
    const line = parsed(row);
    if (!line.ok) return { problem: `Line ${index + 1} is not JSON: ${line.reason}` };
    if (!isObject(line.value)) return { problem: `Line ${index + 1} is not an object of {"custom_id", "params"}.` };
    requests.push(line.value);
    lines.push(index + 1);
  }
  return { requests, lines };
}

function parsed(text: string): { ok: true; value: unknown } | { ok: false; reason: string } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * Where a refused create's problem is, in the person's own terms: the API names it by path in the body
 * (`requests.2.params.model`), the person knows the line (JSONL) or the request's place in the list.
 */
export function whereOf(path: string, lines: number[] | undefined): string | undefined {
  const match = /^requests\.(\d+)(?:\.(.+))?$/.exec(path);
  if (!match) return undefined;
  const index = Number(match[1]);
  const line = lines?.[index];
  const place = line === undefined ? `request ${index + 1}` : `line ${line}`;
  return match[2] ? `${place}, ${match[2]}` : place;
}
