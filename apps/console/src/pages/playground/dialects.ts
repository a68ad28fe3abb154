// The playground's three dialects as data: how a prompt becomes each one's request body, and how each one's
// reply (whole, or event by event) becomes text and tool calls. Pure, so its tests need no browser.

export type PlaygroundDialect = 'chat' | 'responses' | 'messages';

export const DIALECT_LABELS: Record<PlaygroundDialect, string> = {
  chat: 'Chat completions',
  responses: 'Responses',
  messages: 'Messages',
};

export interface PlaygroundTool {
  name: string;
  description: string;
  /** A JSON schema object for the tool's arguments. */
  parameters: Record<string, unknown>;
}

export interface PlaygroundPrompt {
  model: string;
  system: string;
  prompt: string;
  stream: boolean;
  maxTokens: number;
  tools: PlaygroundTool[];
  /** Further request fields, merged over what the form builds (to try a field a dialect drops). */
  extra: Record<string, unknown>;
}

interface ToolCall {
  name: string;
  /** The arguments as JSON text. */
  arguments: string;
  /** Messages streams only: the content block the call's input fragments arrive for. */
  block?: number;
}

export interface ReplySoFar {
  text: string;
  toolCalls: ToolCall[];
  /** The error the reply carried (a refusal, or an error event mid-stream). */
  error?: string;
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const asString = (value: unknown): string => (typeof value === 'string' ? value : '');

/** The request body for `dialect`, as its own SDK would send it. */
export function buildRequest(dialect: PlaygroundDialect, prompt: PlaygroundPrompt): Json {
  const system = prompt.system.trim();
  const tools = prompt.tools;
  let body: Json;
  if (dialect === 'chat') {
    body = {
      model: prompt.model,
      messages: [...(system ? [{ role: 'system', content: system }] : []), { role: 'user', content: prompt.prompt }],
      max_completion_tokens: prompt.maxTokens,
      ...(tools.length > 0
        ? {
            tools: tools.map((tool) => ({
              type: 'function',
              function: { name: tool.name, description: tool.description, parameters: tool.parameters },
            })),
          }
        : {}),
      ...(prompt.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    };
  } else if (dialect === 'responses') {
    body = {
      model: prompt.model,
      ...(system ? { instructions: system } : {}),
      input: prompt.prompt,
      max_output_tokens: prompt.maxTokens,
      ...(tools.length > 0
        ? {
            tools: tools.map((tool) => ({
              type: 'function',
              name: tool.name,
              description: tool.description,
              parameters: tool.parameters,
            })),
          }
        : {}),
      ...(prompt.stream ? { stream: true } : {}),
    };
  } else {
    body = {
      model: prompt.model,
      max_tokens: prompt.maxTokens,
      ...(system ? { system } : {}),
      messages: [{ role: 'user', content: prompt.prompt }],
      ...(tools.length > 0
        ? {
            tools: tools.map((tool) => ({
              name: tool.name,
              description: tool.description,
              input_schema: tool.parameters,
            })),
          }
        : {}),
      ...(prompt.stream ? { stream: true } : {}),
    };
  }
  return { ...body, ...prompt.extra };
}

/** The message of an error body in any of the three dialects, or of the shared envelope. */
function errorMessageOf(body: unknown): string | undefined {
  if (!isObject(body)) return undefined;
  const error = body.error;
  if (isObject(error)) return asString(error.message) || asString(error.type) || 'The call failed.';
  if (typeof error === 'string') return asString(body.message) || error;
  if (body.type === 'error' || body.type === 'response.failed') return 'The call failed.';
  return undefined;
}

/** A whole (not streamed) reply's text and tool calls. */
export function readReply(dialect: PlaygroundDialect, body: unknown): ReplySoFar {
  const error = errorMessageOf(body);
  if (error || !isObject(body)) return { text: '', toolCalls: [], error: error ?? 'The reply was not JSON.' };
  if (dialect === 'chat') {
    const message = asArray(body.choices).find(isObject)?.message;
    if (!isObject(message)) return { text: '', toolCalls: [] };
    return {
      text: asString(message.content),
      toolCalls: asArray(message.tool_calls)
        .filter(isObject)
        .map((call) => {
          const fn = isObject(call.function) ? call.function : {};
          return { name: asString(fn.name), arguments: asString(fn.arguments) };
        }),
    };
  }
  if (dialect === 'responses') {
    const reply: ReplySoFar = { text: '', toolCalls: [] };
    for (const item of asArray(body.output).filter(isObject)) {
      if (item.type === 'message')
        for (const part of asArray(item.content).filter(isObject))
          if (part.type === 'output_text') reply.text += asString(part.text);
      if (item.type === 'function_call')
        reply.toolCalls.push({ name: asString(item.name), arguments: asString(item.arguments) });
    }
    return reply;
  }
  const reply: ReplySoFar = { text: '', toolCalls: [] };
  for (const block of asArray(body.content).filter(isObject)) {
    if (block.type === 'text') reply.text += asString(block.text);
    if (block.type === 'tool_use')
      reply.toolCalls.push({ name: asString(block.name), arguments: JSON.stringify(block.input ?? {}) });
  }
  return reply;
}

/** Folds a dialect's stream events, one at a time, into the reply so far (a new object each time). */
export function foldEvent(dialect: PlaygroundDialect, reply: ReplySoFar, event: unknown): ReplySoFar {
  if (!isObject(event)) return reply;
  const error = errorMessageOf(event);
  if (error) return { ...reply, error };
  const next: ReplySoFar = { ...reply, toolCalls: reply.toolCalls.map((call) => ({ ...call })) };
  if (dialect === 'chat') {
    const delta = asArray(event.choices).find(isObject)?.delta;
    if (!isObject(delta)) return reply;
    next.text += asString(delta.content);
    for (const part of asArray(delta.tool_calls).filter(isObject)) {
      const index = typeof part.index === 'number' ? part.index : next.toolCalls.length;
      const fn = isObject(part.function) ? part.function : {};
      const call = (next.toolCalls[index] ??= { name: '', arguments: '' });
      call.name += asString(fn.name);
      call.arguments += asString(fn.arguments);
    }
    return next;
  }
  if (dialect === 'responses') {
    if (event.type === 'response.output_text.delta') next.text += asString(event.delta);
    else if (event.type === 'response.output_item.done' && isObject(event.item) && event.item.type === 'function_call')
      next.toolCalls.push({ name: asString(event.item.name), arguments: asString(event.item.arguments) });
    else return reply;
    return next;
  }
  // Messages: a tool_use block starts with its name; its input arrives as JSON fragments by block index.
  if (event.type === 'content_block_start' && isObject(event.content_block)) {
    if (event.content_block.type !== 'tool_use') return reply;
    next.toolCalls.push({ name: asString(event.content_block.name), arguments: '', block: Number(event.index) });
    return next;
  }
  if (event.type !== 'content_block_delta' || !isObject(event.delta)) return reply;
  if (event.delta.type === 'text_delta') next.text += asString(event.delta.text);
  else if (event.delta.type === 'input_json_delta') {
    const call = next.toolCalls.find((one) => one.block === Number(event.index));
    if (call) call.arguments += asString(event.delta.partial_json);
  } else return reply;
  return next;
}
