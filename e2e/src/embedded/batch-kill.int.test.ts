import path from 'node:path';
import OpenAI from 'openai';
import { newId } from '@sbc/ids';
import { freePort } from '@sbc/testing';
import { chatLine, createChatBatch, jsonl, untilBatch } from '../support/batches';
import { bundleScratch, exited, FIRST_START_MS, startBundle, type RunningBundle } from '../support/embedded-bundle';
import { usageRows, type UsageRow } from '../support/usage-rows';

/**
 * `kill -9` of the embedded bundle (`npm start`) in the middle of a batch, then a start on the same data directory:
 * the batch resumes where it was (a line whose lease ran out is claimed again) and finishes, and every line has
 * exactly one billed usage row, whichever side of its call the kill landed on (docs/batches.md "Billed once").
 */
const KEY = 'sbc_batch_kill_key_0123456789abcdefghij';
/**
 * Short lines, four at once: a line's call then spends a good part of its time between its usage event becoming
 * durable and its settle, so a kill often lands there (without the line's id as its event id, such a line is
 * billed twice in most runs).
 */
const LINES = 120;
/** The kill lands once this many lines are settled: the rest are queued or in flight. */
const KILL_AFTER = 30;

function startOn(dataDir: string, port: number): Promise<RunningBundle> {
  return startBundle(port, {
    SBC_DATA_DIR: dataDir,
    SBC_BOOTSTRAP_KEY: KEY,
    SIM_LATENCY_MS: '20',
    SIM_TOKENS_PER_SECOND: '0',
    BATCHES_WORKERS: '4',
    BATCHES_POLL_MS: '100',
    // A line in flight at the kill is claimed again by the next start once its lease runs out.
    BATCHES_LEASE_MS: '3000',
    RATE_LIMIT_PER_MINUTE: '100000',
  });
}

/**
 * Every usage row, once the ledger holds a billed row of each of `lineIds` and has applied a call made after the
 * batch ended (the outbox replays the killed process's events in the order they were written).
 */
async function settledUsage(url: string, lineIds: string[]): Promise<UsageRow[]> {
  const later = newId('req');
  const call = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', 'x-request-id': later },
    body: JSON.stringify({ model: 'house', messages: [{ role: 'user', content: 'after the batch' }], max_tokens: 4 }),
  });
  expect(call.status).toBe(200);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const rows = await usageRows(url, KEY);
    const billed = new Set(rows.filter((row) => row.status === 200).map((row) => row.request_id));
    if (billed.has(later) && lineIds.every((id) => billed.has(id))) return rows;
    if (Date.now() > deadline) throw new Error(`the ledger did not catch up: ${JSON.stringify(rows)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe('a batch in the embedded bundle after kill -9', () => {
  const { dir, children } = bundleScratch('sbc-batch-kill-');

  it(
    'resumes on the same data and finishes, with each line billed once and the usage summing to the lines',
    async () => {
      const port = await freePort();
      const dataDir = path.join(dir(), 'data');
      const first = await startOn(dataDir, port);
      children.push(first.child);
      const openai = new OpenAI({ apiKey: KEY, baseURL: `${first.url}/v1`, maxRetries: 0, timeout: 10_000 });
      const ids = Array.from({ length: LINES }, (_, index) => `k-${index}`);
      // Replies of different lengths, so the sums below add up distinct lines.
      const created = await createChatBatch(
        openai,
        ids.map((id, index) => chatLine(id, 'house', `sim-tokens:${3 + (index % 5)} line ${id}`)),
      );
      const before = await untilBatch(openai, created.id, (batch) => batch.request_counts!.completed >= KILL_AFTER);
      first.child.kill('SIGKILL');
      await exited(first.child, 10_000);
      expect(before.request_counts!.completed).toBeLessThan(LINES);

      const second = await startOn(dataDir, port);
      children.push(second.child);
      try {
        const done = await untilBatch(openai, created.id, undefined, 60_000);
        expect(done).toMatchObject({
          status: 'completed',
          request_counts: { total: LINES, completed: LINES, failed: 0 },
        });
        const output = await jsonl(openai, done.output_file_id);
        expect(output.map((line) => line.custom_id).sort()).toEqual([...ids].sort());
        const lineIds = output.map((line) => line.id as string);

        const rows = await settledUsage(second.url, lineIds);
        const ofLines = rows.filter((row) => lineIds.includes(row.request_id));
        const billed = ofLines.filter((row) => row.status === 200);
        // Exactly one answered row per line, under the line's own id; any other row of a line charged nothing.
        expect(billed.map((row) => row.request_id).sort()).toEqual([...lineIds].sort());
        for (const row of billed) expect(row.id).toBe(row.request_id);
        expect(ofLines.filter((row) => row.status !== 200 && row.credits_charged !== 0)).toEqual([]);
        const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);
        expect(sum(billed.map((row) => row.native_tokens_prompt))).toBe(
          sum(output.map((line) => line.response.body.usage.prompt_tokens as number)),
        );
        expect(sum(billed.map((row) => row.native_tokens_completion))).toBe(
          sum(output.map((line) => line.response.body.usage.completion_tokens as number)),
        );
      } finally {
        second.child.kill('SIGTERM');
        await exited(second.child, 30_000);
      }
    },
    2 * FIRST_START_MS + 60_000,
  );
});
