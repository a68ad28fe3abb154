/**
 * A build's model calls, made through the edge like any caller's (chat completions), with the key minted for
 * the job so usage lands on the job's account.
 */

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** The upstream is overloaded or failing (429/5xx): the lane backs off and the job waits its turn again. */
export class UpstreamBusyError extends Error {
  constructor(
    readonly status: number,
    /** What the upstream asked for (Retry-After), when it said. */
    readonly retryAfterMs: number | undefined,
  ) {
    super(`The model upstream answered ${status}.`);
    this.name = 'UpstreamBusyError';
  }
}

/** The call was refused for good (budget, model not allowed, bad request): the job fails with this message. */
export class ModelRefusedError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ModelRefusedError';
  }
}

export interface ModelCall {
  gatewayUrl: string;
  secret: string;
  model: string;
  messages: ChatMessage[];
  maxTokens: number;
  timeoutMs: number;
  signal: AbortSignal;
}

function retryAfterMs(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

function errorMessageOf(body: unknown): string | undefined {
  const error = (body as { error?: unknown } | null)?.error;
  if (typeof error === 'string') return error;
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : undefined;
}

/** One non-streaming chat completion; answers the assistant's text. */
export async function complete(call: ModelCall): Promise<{ text: string; model: string }> {
  const signal = AbortSignal.any([call.signal, AbortSignal.timeout(call.timeoutMs)]);
  let res: Response;
  try {
    res = await fetch(`${call.gatewayUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${call.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: call.model, messages: call.messages, max_tokens: call.maxTokens, stream: false }),
      signal,
    });
  } catch (error) {
    if (call.signal.aborted) throw error;
    // Unreachable or timed out: treated like a 5xx, the lane backs off and the job is tried again.
    throw new UpstreamBusyError(signal.aborted ? 504 : 502, undefined);
  }
  const body: unknown = await res.json().catch(() => undefined);
  if (res.status === 429 || res.status >= 500)
    throw new UpstreamBusyError(res.status, retryAfterMs(res.headers.get('retry-after')));
  if (!res.ok)
    throw new ModelRefusedError(
      res.status,
      `The model call was refused (${res.status}): ${errorMessageOf(body) ?? 'no reason given'}`,
    );
  const reply = body as { model?: string; choices?: { message?: { content?: unknown } }[] };
  const content = reply.choices?.[0]?.message?.content;
  if (typeof content !== 'string' || content.trim() === '')
    throw new ModelRefusedError(res.status, 'The model answered with no text.');
  return { text: content, model: reply.model ?? call.model };
}
