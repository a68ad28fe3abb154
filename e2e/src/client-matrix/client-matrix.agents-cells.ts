import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool } from '@openai/agents';
import OpenAI from 'openai';
import { z } from 'zod';
import { AFTER_TOOL, QUESTION, TOOL_RESULT, type Cell, type CellContext } from './client-matrix.cells';

/** The OpenAI Agents SDK: one agent run with a tool, on Responses (its default) and on chat completions. */

// Traces would otherwise be exported to api.openai.com.
setTracingDisabled(true);

async function agentRun(ctx: CellContext, useResponses: boolean): Promise<void> {
  const calls: unknown[] = [];
  const getWeather = tool({
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: z.object({ location: z.string() }),
    execute: (input) => {
      calls.push(input);
      return TOOL_RESULT;
    },
  });
  const agent = new Agent({ name: 'Forecaster', instructions: 'Be brief.', model: ctx.model, tools: [getWeather] });
  const openAIClient = new OpenAI({ apiKey: ctx.apiKey, baseURL: `${ctx.edgeUrl}/v1`, maxRetries: 0 });
  const runner = new Runner({
    modelProvider: new OpenAIProvider({ openAIClient, useResponses }),
    tracingDisabled: true,
  });
  const result = await runner.run(agent, QUESTION, { maxTurns: 3 });
  expect(calls).toEqual([{ location: expect.any(String) }]);
  expect(result.finalOutput).toMatch(AFTER_TOOL);
}

export const agentsCells: Cell[] = [
  {
    client: '@openai/agents',
    route: '/v1/responses',
    call: 'run (agent with a tool)',
    streams: false,
    tools: true,
    run: (ctx) => agentRun(ctx, true),
  },
  {
    client: '@openai/agents',
    route: '/v1/chat/completions',
    call: 'run (agent with a tool, chat completions model)',
    streams: false,
    tools: true,
    run: (ctx) => agentRun(ctx, false),
  },
];
