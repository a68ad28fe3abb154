import { createSseDecoder } from '@sbc/dialects';

/** A chat-completions message as the run's transcript keeps it (and sends it back each step). */
export type ChatMessage =
  | { role: 'system' | 'user'; content: string }
  | {
      role: 'assistant';
      content: string | null;
      tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
    }
  | { role: 'tool'; tool_call_id: string; content: string };

interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface ModelTurn {
  text: string;
  toolCalls: ToolCall[];
  inputTokens: number;
  outputTokens: number;
}

/** The edge refused or failed the call; `code` is its error code (e.g. `budget_exhausted`). */
export class ModelCallError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ModelCallError';
  }
}

interface ChatChunk {
  choices?: {
    delta?: {
      content?: string | null;
      tool_calls?: { index?: number; id?: string; function?: { name?: string; arguments?: string } }[];
    };
  }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
  error?: { message?: string; code?: string | null; type?: string };
}

async function refusal(response: Response): Promise<ModelCallError> {
  const text = await response.text().catch(() => '');
  try {
    const body = JSON.parse(text) as ChatChunk;
    const code = body.error?.code ?? body.error?.type ?? `http_${response.status}`;
    return new ModelCallError(code, body.error?.message ?? `The model call answered HTTP ${response.status}.`);
  } catch {
    return new ModelCallError(`http_${response.status}`, `The model call answered HTTP ${response.status}.`);
  }
}

/**
 * One streamed chat-completions call through the edge, as any caller makes it: the run's own key, so the call
 * is authenticated, limited and billed like the run's creator. Text arrives through `onText` as it streams;
 * aborting `signal` closes the connection at once (the edge then stops the upstream).
 */
export async function callModel(options: {
  gatewayUrl: string;
  key: string;
  model: string;
  messages: ChatMessage[];
  tools: readonly unknown[];
  signal: AbortSignal;
  onText: (delta: string) => void;
}): Promise<ModelTurn> {
  let response: Response;
  try {
    response = await fetch(`${options.gatewayUrl.replace(/\/+$/, '')}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${options.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: options.model,
        messages: options.messages,
        tools: options.tools,
        stream: true,
        stream_options: { include_usage: true },
      }),
      signal: options.signal,
    });
  } catch (error) {
    if (options.signal.aborted) throw error;
    throw new ModelCallError('model_unreachable', 'The gateway could not be reached for the model call.');
  }
  if (!response.ok || !response.body) throw await refusal(response);

  const turn: ModelTurn = { text: '', toolCalls: [], inputTokens: 0, outputTokens: 0 };
  const calls = new Map<number, ToolCall>();
  let failure: ModelCallError | undefined;
  const decoder = createSseDecoder((event) => {
    if (event.data === '[DONE]' || failure) return;
    let chunk: ChatChunk;
    try {
      chunk = JSON.parse(event.data) as ChatChunk;
    } catch {
      failure = new ModelCallError('model_error', 'The model stream sent malformed data.');
      return;
    }
    if (chunk.error) {
      failure = new ModelCallError(
        chunk.error.code ?? chunk.error.type ?? 'model_error',
        chunk.error.message ?? 'The model stream failed.',
      );
      return;
    }
    if (chunk.usage) {
      turn.inputTokens = chunk.usage.prompt_tokens ?? turn.inputTokens;
      turn.outputTokens = chunk.usage.completion_tokens ?? turn.outputTokens;
    }
    const delta = chunk.choices?.[0]?.delta;
    if (delta?.content) {
      turn.text += delta.content;
      options.onText(delta.content);
    }
    for (const part of delta?.tool_calls ?? []) {
      const index = part.index ?? 0;
      const call = calls.get(index) ?? { id: '', name: '', arguments: '' };
      if (part.id) call.id = part.id;
      if (part.function?.name) call.name += part.function.name;
      if (part.function?.arguments) call.arguments += part.function.arguments;
      calls.set(index, call);
    }
  });
  try {
    for await (const bytes of response.body) decoder.feed(bytes);
    decoder.end();
  } catch (error) {
    if (options.signal.aborted) throw error;
    throw new ModelCallError('model_error', 'The model stream broke off.');
  }
  if (failure) throw failure;
  turn.toolCalls = [...calls.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, call]) => ({ ...call, id: call.id || `call_${index}` }));
  return turn;
}
