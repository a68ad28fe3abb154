import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateObject, generateText, stepCountIs, streamText, tool, type LanguageModel } from 'ai';
import { z } from 'zod';
import { AFTER_TOOL, QUESTION, SIMULATED, TOOL_RESULT, type Cell, type CellContext } from './client-matrix.cells';

/**
 * The Vercel AI SDK (`ai`) over each of its providers that can reach the edge: `@ai-sdk/openai` on Responses
 * (its default) and on chat completions, `@ai-sdk/anthropic` on Messages, `@ai-sdk/openai-compatible` on chat
 * completions. Its response schemas are the strictest in wide use: a reply field in the wrong type (a null
 * where the provider leaves the field out) fails the whole call as "Invalid JSON response".
 */

type Provider = { name: string; route: Cell['route']; model(ctx: CellContext): LanguageModel };

const providers: Provider[] = [
  {
    name: '@ai-sdk/openai (Responses)',
    route: '/v1/responses',
    model: (ctx) => createOpenAI({ apiKey: ctx.apiKey, baseURL: `${ctx.edgeUrl}/v1` }).responses(ctx.model),
  },
  {
    name: '@ai-sdk/openai (chat)',
    route: '/v1/chat/completions',
    model: (ctx) => createOpenAI({ apiKey: ctx.apiKey, baseURL: `${ctx.edgeUrl}/v1` }).chat(ctx.model),
  },
  {
    name: '@ai-sdk/anthropic',
    route: '/v1/messages',
    model: (ctx) => createAnthropic({ apiKey: ctx.apiKey, baseURL: `${ctx.edgeUrl}/v1` })(ctx.model),
  },
  {
    name: '@ai-sdk/openai-compatible',
    route: '/v1/chat/completions',
    // Structured outputs on: without it the provider asks for JSON mode and puts the schema in the prompt,
    // which the simulators (unlike a model) do not read.
    model: (ctx) =>
      createOpenAICompatible({
        name: 'edge',
        apiKey: ctx.apiKey,
        baseURL: `${ctx.edgeUrl}/v1`,
        includeUsage: true,
        supportsStructuredOutputs: true,
      }).chatModel(ctx.model),
  },
];

const weatherTools = () => {
  const calls: unknown[] = [];
  const tools = {
    get_weather: tool({
      description: 'Weather for a city',
      inputSchema: z.object({ location: z.string().describe('A city') }),
      execute: (input) => {
        calls.push(input);
        return TOOL_RESULT;
      },
    }),
  };
  return { tools, calls };
};

function cellsFor(provider: Provider): Cell[] {
  const client = `ai + ${provider.name}`;
  return [
    {
      client,
      route: provider.route,
      call: 'generateText',
      streams: false,
      tools: false,
      async run(ctx) {
        const { text, finishReason, usage } = await generateText({
          model: provider.model(ctx),
          system: 'Be brief.',
          prompt: 'Say hello',
          maxRetries: 0,
        });
        expect(text).toMatch(SIMULATED);
        expect(finishReason).toBe('stop');
        expect(usage.outputTokens).toBeGreaterThan(0);
      },
    },
    {
      client,
      route: provider.route,
      call: 'generateText with tools over several steps',
      streams: false,
      tools: true,
      async run(ctx) {
        const { tools, calls } = weatherTools();
        const result = await generateText({
          model: provider.model(ctx),
          tools,
          prompt: QUESTION,
          stopWhen: stepCountIs(3),
          maxRetries: 0,
        });
        expect(calls).toEqual([{ location: expect.any(String) }]);
        expect(result.steps).toHaveLength(2);
        expect(result.text).toMatch(AFTER_TOOL);
      },
    },
    {
      client,
      route: provider.route,
      call: 'streamText with tools over several steps',
      streams: true,
      tools: true,
      async run(ctx) {
        const { tools, calls } = weatherTools();
        const errors: unknown[] = [];
        const result = streamText({
          model: provider.model(ctx),
          tools,
          prompt: QUESTION,
          stopWhen: stepCountIs(3),
          maxRetries: 0,
          onError: ({ error }) => void errors.push(error),
        });
        expect(await result.text).toMatch(AFTER_TOOL);
        expect(errors).toEqual([]);
        expect(calls).toHaveLength(1);
      },
    },
    {
      client,
      route: provider.route,
      call: 'generateObject',
      streams: false,
      tools: false,
      async run(ctx) {
        const { object } = await generateObject({
          model: provider.model(ctx),
          schema: z.object({ city: z.string(), celsius: z.number() }),
          prompt: 'Weather report as JSON',
          maxRetries: 0,
        });
        expect(object).toEqual({ city: expect.any(String), celsius: expect.any(Number) });
      },
    },
  ];
}

export const vercelCells: Cell[] = providers.flatMap(cellsFor);
