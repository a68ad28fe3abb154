import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { loadEmbeddedConfig, start, type RunningEmbedded } from '@sbc/app-embedded';
import { chatLine, createChatBatch, jsonl, untilBatch } from '../support/batches';

/**
 * Files and batches in the single-process default (`npm start`): the runs service's PGlite under the data
 * folder keeps the file and the batch, and its batch lane calls the house model through the same process's edge.
 */

let dataDir: string;
let embedded: RunningEmbedded;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'sbc-batches-'));
  embedded = await start(
    loadEmbeddedConfig({ SBC_DATA_DIR: dataDir, PORT: '0', BASE_URL: 'http://localhost:8080', LOG_LEVEL: 'silent' }),
  );
}, 120_000);

afterAll(async () => {
  await embedded?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

it('a batch uploaded to the embedded service runs to completed and its output file reads back', async () => {
  const openai = new OpenAI({ apiKey: embedded.bootstrap.key, baseURL: `${embedded.url}/v1`, maxRetries: 0 });
  const created = await createChatBatch(
    openai,
    ['a', 'b', 'c'].map((id) => chatLine(id)),
  );
  const batch = await untilBatch(openai, created.id, undefined, 60_000);
  expect(batch).toMatchObject({ status: 'completed', request_counts: { total: 3, completed: 3, failed: 0 } });
  const output = await jsonl(openai, batch.output_file_id);
  expect(output.map((line) => [line.custom_id, line.response.status_code]).sort()).toEqual([
    ['a', 200],
    ['b', 200],
    ['c', 200],
  ]);
}, 120_000);
