import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadSimConfig, start as startSim, type RunningSim, type SimDialect } from '@sbc/app-sim-upstream';
import { OWNER_KEY, simHouseAndEmbed, startStack, type AccountSurfaceStack } from '../support/stack';
import type { Cell, Target } from './client-matrix.cells';
import { agentsCells } from './client-matrix.agents-cells';
import { embeddingsCells } from './client-matrix.embeddings-cells';
import { langchainCells } from './client-matrix.langchain-cells';
import { sdkCells } from './client-matrix.sdk-cells';
import { withTable, worksWithTable } from './client-matrix.table';
import { vercelCells } from './client-matrix.vercel-cells';

/**
 * The client compatibility matrix (issue 17): every popular client, on every edge route it can use, streamed
 * and not, with tools, against a house model, an OpenAI-dialect endpoint and an Anthropic-dialect endpoint.
 * Each endpoint is a simulator that speaks only its dialect and checks every request by that provider's
 * rules, so a translation a real provider would refuse fails here. The "Works with" table (docs/model-calls.md) is
 * rendered from the same cells and must match.
 */

const TARGETS: Target[] = [
  { name: 'house', label: 'house model', model: 'house', listedAs: 'house', embeddingModel: 'house-embed' },
  {
    name: 'openai-endpoint',
    label: 'OpenAI-dialect endpoint',
    model: 'oai/sim-large',
    listedAs: 'sim-large',
    embeddingModel: 'oai/sim-embed',
  },
  {
    name: 'anthropic-endpoint',
    label: 'Anthropic-dialect endpoint',
    model: 'ant/sim-large',
    listedAs: 'sim-large',
    embeddingModel: 'ant/sim-embed',
  },
];
const CELLS: Cell[] = [...sdkCells, ...vercelCells, ...langchainCells, ...agentsCells, ...embeddingsCells];

const WORKS_WITH_PAGE = path.join(__dirname, '../../../docs/model-calls.md');

const oneDialectSim = (dialect: SimDialect) =>
  startSim(loadSimConfig({ SIM_PORT: '0', SIM_LATENCY_MS: '0', SIM_TOKENS_PER_SECOND: '0', LOG_LEVEL: 'silent' }), {
    dialects: [dialect],
  });

let stack: AccountSurfaceStack;
const sims: RunningSim[] = [];
beforeAll(async () => {
  // The runs service keeps stored Responses (`store` is on by default; previous_response_id reads them).
  stack = await startStack({ label: 'client_matrix', house: simHouseAndEmbed, runs: { env: { RUNS_WORKERS: '0' } } });
  const [openai, anthropic] = await Promise.all([oneDialectSim('openai'), oneDialectSim('anthropic')]);
  sims.push(openai, anthropic);
  for (const [slug, dialect, baseUrl] of [
    ['oai', 'openai', `${openai.url}/v1`],
    ['ant', 'anthropic', anthropic.url],
  ] as const) {
    const saved = await stack.api('POST', '/v1/upstreams', {
      key: OWNER_KEY,
      body: { label: slug, slug, base_url: baseUrl, dialect, api_key: 'sk-endpoint' },
    });
    expect(saved.body.probe).toMatchObject({ ok: true, dialect });
  }
}, 60_000);
afterAll(async () => {
  for (const sim of sims) await sim.stop();
  await stack?.stop();
});

describe.each(CELLS.map((cell) => [`${cell.client} ${cell.call}`, cell] as const))('%s', (_name, cell) => {
  it.each(TARGETS.map((target) => [target.label, target] as const))('works against the %s', async (_label, target) => {
    await cell.run({
      target: target.name,
      edgeUrl: stack.edge.url,
      apiKey: OWNER_KEY,
      model: target.model,
      listedAs: target.listedAs,
      embeddingModel: target.embeddingModel,
    });
  });
});

it('the README\'s "Works with" table is the one these cells render', () => {
  const readme = readFileSync(WORKS_WITH_PAGE, 'utf8');
  const updated = withTable(readme, worksWithTable(CELLS, TARGETS));
  expect(updated).toBeDefined();
  if (process.env.UPDATE_WORKS_WITH === '1') writeFileSync(WORKS_WITH_PAGE, updated!);
  else expect(readme).toBe(updated);
});
