import { ChatAnthropic } from '@langchain/anthropic';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, HumanMessage, ToolMessage, type AIMessageChunk, type BaseMessage } from '@langchain/core/messages';
import { ChatOpenAI } from '@langchain/openai';
import {
  AFTER_TOOL,
  QUESTION,
  SIMULATED,
  TOOL_RESULT,
  WEATHER_SCHEMA,
  type Cell,
  type CellContext,
} from './client-matrix.cells';

/** LangChain JS: `ChatOpenAI` on chat completions and on Responses, `ChatAnthropic` on Messages. */

type Chat = { name: string; route: Cell['route']; model(ctx: CellContext): BaseChatModel };

const chats: Chat[] = [
  {
    name: '@langchain/openai ChatOpenAI',
    route: '/v1/chat/completions',
    model: (ctx) =>
      new ChatOpenAI({
        model: ctx.model,
        apiKey: ctx.apiKey,
        maxRetries: 0,
        configuration: { baseURL: `${ctx.edgeUrl}/v1` },
      }),
  },
  {
    name: '@langchain/openai ChatOpenAI (Responses)',
    route: '/v1/responses',
    model: (ctx) =>
      new ChatOpenAI({
        model: ctx.model,
        apiKey: ctx.apiKey,
        maxRetries: 0,
        useResponsesApi: true,
        configuration: { baseURL: `${ctx.edgeUrl}/v1` },
      }),
  },
  {
    name: '@langchain/anthropic ChatAnthropic',
    route: '/v1/messages',
    model: (ctx) =>
      new ChatAnthropic({ model: ctx.model, apiKey: ctx.apiKey, maxRetries: 0, anthropicApiUrl: ctx.edgeUrl }),
  },
];

const weatherTool = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'Weather for a city', parameters: WEATHER_SCHEMA },
};

const textOf = (message: BaseMessage): string =>
  typeof message.content === 'string'
    ? message.content
    : message.content.map((part) => ('text' in part ? part.text : '')).join('');

function cellsFor(chat: Chat): Cell[] {
  const client = chat.name;
  return [
    {
      client,
      route: chat.route,
      call: 'invoke',
      streams: false,
      tools: false,
      async run(ctx) {
        expect(textOf(await chat.model(ctx).invoke([new HumanMessage('Say hello')]))).toMatch(SIMULATED);
      },
    },
    {
      client,
      route: chat.route,
      call: 'stream',
      streams: true,
      tools: false,
      async run(ctx) {
        let text = '';
        for await (const chunk of await chat.model(ctx).stream([new HumanMessage('Say hello')])) text += textOf(chunk);
        expect(text).toMatch(SIMULATED);
      },
    },
    {
      client,
      route: chat.route,
      call: 'bindTools, invoke, tool result, invoke',
      streams: false,
      tools: true,
      async run(ctx) {
        const model = chat.model(ctx).bindTools!([weatherTool]);
        const history: BaseMessage[] = [new HumanMessage(QUESTION)];
        const asked = (await model.invoke(history)) as AIMessageChunk | AIMessage;
        expect(asked.tool_calls).toEqual([
          expect.objectContaining({ name: 'get_weather', args: { location: expect.any(String) } }),
        ]);
        history.push(asked, new ToolMessage({ content: TOOL_RESULT, tool_call_id: asked.tool_calls![0]!.id! }));
        expect(textOf(await model.invoke(history))).toMatch(AFTER_TOOL);
      },
    },
  ];
}

export const langchainCells: Cell[] = chats.flatMap(cellsFor);
