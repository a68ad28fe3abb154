import OpenAI, { toFile } from 'openai';
import type { Batch } from 'openai/resources/batches';

/** One line of a batch input file: a Chat Completions call of `model` whose prompt is `content`. */
export function chatLine(customId: string, model = 'house', content = `Say ${customId}`): string {
  return JSON.stringify({
    custom_id: customId,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model, messages: [{ role: 'user', content }], max_tokens: 16 },
  });
}

/** Uploads `lines` as a batch input file and creates a chat batch over it, as a caller does with the SDK. */
export async function createChatBatch(
  openai: OpenAI,
  lines: string[],
  metadata?: Record<string, string>,
): Promise<Batch> {
  const input = await openai.files.create({
    file: await toFile(Buffer.from(`${lines.join('\n')}\n`), 'in.jsonl'),
    purpose: 'batch',
  });
  return openai.batches.create({
    input_file_id: input.id,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
    ...(metadata ? { metadata } : {}),
  });
}

export const ended = (batch: Batch) => ['completed', 'cancelled', 'expired', 'failed'].includes(batch.status);

/** Polls a batch until `done` holds (by default, until it has ended); past `timeoutMs` fails with the batch. */
export async function untilBatch(
  openai: OpenAI,
  id: string,
  done: (batch: Batch) => boolean = ended,
  timeoutMs = 120_000,
): Promise<Batch> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const batch = await openai.batches.retrieve(id);
    if (done(batch)) return batch;
    if (Date.now() > deadline) throw new Error(`batch ${id} stuck: ${JSON.stringify(batch)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** A parsed result line, loosely typed so tests can assert on its fields directly. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type ResultLine = Record<string, any>;

/** An output or error file as its parsed lines; none when the file was not written (its id is null). */
export async function jsonl(openai: OpenAI, fileId: string | null | undefined): Promise<ResultLine[]> {
  if (!fileId) return [];
  const text = await (await openai.files.content(fileId)).text();
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as ResultLine);
}
