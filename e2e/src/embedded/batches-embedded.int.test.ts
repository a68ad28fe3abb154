import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI, { toFile } from 'openai';
import { loadEmbeddedConfig, start, type RunningEmbedded } from '@sbc/app-embedded';

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
  const lines = ['a', 'b', 'c'].map((id) =>
    JSON.stringify({
      custom_id: id,
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: 'house', messages: [{ role: 'user', content: `Say ${id}` }], max_tokens: 8 },
    }),
  );
  const file = await openai.files.create({
    file: await toFile(Buffer.from(lines.join('\n')), 'in.jsonl'),
    purpose: 'batch',
  });
  let batch = await openai.batches.create({
    input_file_id: file.id,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
  });
  for (const deadline = Date.now() + 60_000; batch.status !== 'completed';) {
    if (Date.now() > deadline) throw new Error(`stuck: ${JSON.stringify(batch)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
    batch = await openai.batches.retrieve(batch.id);
  }
  expect(batch.request_counts).toEqual({ total: 3, completed: 3, failed: 0 });
  const output = (await (await openai.files.content(batch.output_file_id!)).text())
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { custom_id: string; response: { status_code: number } });
  expect(output.map((line) => [line.custom_id, line.response.status_code]).sort()).toEqual([
    ['a', 200],
    ['b', 200],
    ['c', 200],
  ]);
}, 120_000);
