/** The endpoints a batch line may call, as OpenAI's Batch API names them. */
const BATCH_ENDPOINTS = ['/v1/chat/completions', '/v1/responses', '/v1/embeddings'] as const;
type BatchEndpoint = (typeof BATCH_ENDPOINTS)[number];

const CUSTOM_ID_MAX_CHARS = 512;
const LF = 0x0a;

/** The first bad line of a batch input file: its 1-based number and what is wrong with it. */
export interface BadLine {
  line: number;
  message: string;
}

/** A batch input line once checked. */
interface InputLine {
  custom_id: string;
  method: 'POST';
  url: BatchEndpoint;
  body: Record<string, unknown>;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Why one line of a batch input file is not a request OpenAI's Batch API would take, or undefined if it is. */
export function lineProblem(text: string): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'not valid JSON.';
  }
  if (!isObject(value)) return 'not a JSON object.';
  const { custom_id: customId, method, url, body } = value;
  if (typeof customId !== 'string' || customId === '') return 'custom_id must be a non-empty string.';
  if (customId.length > CUSTOM_ID_MAX_CHARS) return `custom_id is longer than ${CUSTOM_ID_MAX_CHARS} characters.`;
  if (method !== 'POST') return "method must be 'POST'.";
  if (typeof url !== 'string' || !(BATCH_ENDPOINTS as readonly string[]).includes(url))
    return `url must be one of ${BATCH_ENDPOINTS.join(', ')}.`;
  if (!isObject(body)) return 'body must be a JSON object.';
  if (typeof body.model !== 'string' || body.model === '') return 'body.model must be a non-empty string.';
  return undefined;
}

/**
 * Checks a batch input file line by line as its bytes stream past (JSONL, blank lines skipped): each line one
 * request, custom ids unique. Memory holds one line at a time. After `end()`, `bad` is the first bad line, if any.
 */
export class InputLineChecker {
  bad: BadLine | undefined;
  /** Requests seen so far. */
  requests = 0;
  private line = 0;
  private partial: Buffer[] = [];
  private readonly seen = new Set<string>();

  feed(bytes: Buffer): void {
    let start = 0;
    for (let at = bytes.indexOf(LF); at >= 0 && !this.bad; at = bytes.indexOf(LF, start)) {
      this.partial.push(bytes.subarray(start, at));
      this.check(Buffer.concat(this.partial));
      this.partial = [];
      start = at + 1;
    }
    if (!this.bad && start < bytes.length) this.partial.push(bytes.subarray(start));
  }

  end(): void {
    if (!this.bad && this.partial.length > 0) this.check(Buffer.concat(this.partial));
    this.partial = [];
    if (!this.bad && this.requests === 0) this.bad = { line: 1, message: 'the file holds no requests.' };
  }

  private check(bytes: Buffer): void {
    this.line += 1;
    const text = bytes.toString('utf8').replace(/\r$/, '');
    if (text.trim() === '') return;
    const problem = lineProblem(text);
    if (problem) {
      this.bad = { line: this.line, message: problem };
      return;
    }
    const customId = (JSON.parse(text) as InputLine).custom_id;
    if (this.seen.has(customId)) {
      this.bad = { line: this.line, message: `custom_id '${customId.slice(0, 64)}' is used by an earlier line.` };
      return;
    }
    this.seen.add(customId);
    this.requests += 1;
  }
}
