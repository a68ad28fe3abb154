import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { OpenAIEmbeddings } from '@langchain/openai';
import { cosineSimilarity, embed, embedMany, type EmbeddingModel } from 'ai';
import OpenAI from 'openai';
import type { Cell, CellContext, Refusal } from './client-matrix.cells';

/**
 * `POST /v1/embeddings` from every client that has an embeddings call: the `openai` SDK, the Vercel AI SDK's
 * `embed` and `embedMany` (over `@ai-sdk/openai` and `@ai-sdk/openai-compatible`), LangChain's
 * `OpenAIEmbeddings`. The Anthropic dialect has no embeddings, so an Anthropic-dialect endpoint is refused.
 */

const NO_EMBEDDINGS: Refusal = {
  targets: ['anthropic-endpoint'],
  why: 'the Anthropic dialect has no embeddings',
};
const REFUSED = /Anthropic dialect has no embeddings/;

const TEXTS = ['sunny in Paris', 'rain in London', 'sunny in Paris'];

/** Unit vectors, one per text, the same for the same text: what the simulator behind every target gives. */
function expectVectors(vectors: readonly (readonly number[])[]): void {
  expect(vectors).toHaveLength(TEXTS.length);
  for (const vector of vectors) {
    expect(vector).toHaveLength(1536);
    expect(Math.hypot(...vector)).toBeCloseTo(1, 5);
  }
  expect(vectors[2]).toEqual(vectors[0]);
  expect(vectors[1]).not.toEqual(vectors[0]);
}

/** Runs a cell's calls; on a refused target, checks they fail with the refusal's words instead. */
async function answersOrRefuses(ctx: CellContext, calls: () => Promise<void>): Promise<void> {
  if (ctx.target === 'anthropic-endpoint') await expect(calls()).rejects.toThrow(REFUSED);
  else await calls();
}

const openAi = (ctx: CellContext) => new OpenAI({ apiKey: ctx.apiKey, baseURL: `${ctx.edgeUrl}/v1`, maxRetries: 0 });

const vercelProviders: Array<{ name: string; model(ctx: CellContext): EmbeddingModel }> = [
  {
    name: '@ai-sdk/openai',
    model: (ctx) =>
      createOpenAI({ apiKey: ctx.apiKey, baseURL: `${ctx.edgeUrl}/v1` }).textEmbeddingModel(ctx.embeddingModel),
  },
  {
    name: '@ai-sdk/openai-compatible',
    model: (ctx) =>
      createOpenAICompatible({ name: 'edge', apiKey: ctx.apiKey, baseURL: `${ctx.edgeUrl}/v1` }).textEmbeddingModel(
        ctx.embeddingModel,
      ),
  },
];

const sdkCell: Cell = {
  client: 'openai',
  route: '/v1/embeddings',
  call: 'embeddings.create (float, and base64 by default)',
  streams: false,
  tools: false,
  refusal: NO_EMBEDDINGS,
  run: (ctx) =>
    answersOrRefuses(ctx, async () => {
      const floats = await openAi(ctx).embeddings.create({
        model: ctx.embeddingModel,
        input: TEXTS,
        encoding_format: 'float',
      });
      expectVectors(floats.data.map((item) => item.embedding));
      expect(floats.model).toBe(ctx.embeddingModel);
      // Without encoding_format the SDK asks for base64 and decodes it itself.
      const decoded = await openAi(ctx).embeddings.create({ model: ctx.embeddingModel, input: TEXTS });
      decoded.data.forEach((item, index) =>
        item.embedding.forEach((value, at) => expect(value).toBeCloseTo(floats.data[index]!.embedding[at]!, 6)),
      );
    }),
};

const vercelCells: Cell[] = vercelProviders.map((provider) => ({
  client: `ai + ${provider.name}`,
  route: '/v1/embeddings',
  call: 'embed and embedMany',
  streams: false,
  tools: false,
  refusal: NO_EMBEDDINGS,
  run: (ctx) =>
    answersOrRefuses(ctx, async () => {
      const model = provider.model(ctx);
      const many = await embedMany({ model, values: TEXTS, maxRetries: 0 });
      expectVectors(many.embeddings);
      expect(many.usage.tokens).toBeGreaterThan(0);
      const one = await embed({ model, value: TEXTS[0]!, maxRetries: 0 });
      expect(cosineSimilarity(one.embedding, many.embeddings[0]!)).toBeCloseTo(1, 6);
    }),
}));

const langchainCell: Cell = {
  client: '@langchain/openai OpenAIEmbeddings',
  route: '/v1/embeddings',
  call: 'embedDocuments and embedQuery',
  streams: false,
  tools: false,
  refusal: NO_EMBEDDINGS,
  run: (ctx) =>
    answersOrRefuses(ctx, async () => {
      const embeddings = new OpenAIEmbeddings({
        model: ctx.embeddingModel,
        apiKey: ctx.apiKey,
        maxRetries: 0,
        configuration: { baseURL: `${ctx.edgeUrl}/v1` },
      });
      const documents = await embeddings.embedDocuments(TEXTS);
      expectVectors(documents);
      const query = await embeddings.embedQuery(TEXTS[1]!);
      query.forEach((value, at) => expect(value).toBeCloseTo(documents[1]![at]!, 6));
    }),
};

export const embeddingsCells: Cell[] = [sdkCell, ...vercelCells, langchainCell];
