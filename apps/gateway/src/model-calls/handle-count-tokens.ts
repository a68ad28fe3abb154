import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '@sbc/errors';
import { callerDialect, upstreamAdapter, type UpstreamAdapter } from '@sbc/dialects';
import { authorizeRequest } from '../auth/authorize';
import { requestIdFor } from '../http/request-id';
import type { Engine } from '../routing/engines';
import { passHeadersOf } from '../upstream/client';
import { readJsonBody } from './body';
import { CallResponse } from './call-response';
import type { ModelCallDeps } from './handle-call';
import { countMessagesBody } from './count-tokens';
import { resolveCallRoute } from './route-call';

/** The dialect of `/v1/messages/count_tokens`, and of its refusals. */
export const MESSAGES = callerDialect('messages');

/**
 * `POST /v1/messages/count_tokens` (any key; `?beta=true` too). When the model's first engine's dialect has a
 * count route (Anthropic's) its own count is used; otherwise, or when the upstream cannot count, the o200k tokenizer
 * counts locally. Either way the answer is `{input_tokens}`.
 */
export function createCountTokensHandler(deps: ModelCallDeps) {
  return async function handleCountTokens(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestId = requestIdFor(req.headers['x-request-id']);
    const out = new CallResponse(res, MESSAGES, requestId, deps.baseUrl);
    try {
      const principal = await authorizeRequest(deps, req.headers, requestId, []);
      out.addHeaders(await deps.rateLimit(principal));
      const { value } = await readJsonBody(req, deps.maxBodyBytes);
      if (typeof value !== 'object' || value === null || Array.isArray(value))
        throw new ApiError('invalid_request', 'The request body must be a JSON object.', { param: 'body' });
      const body = value as Record<string, unknown>;
      if (typeof body.model !== 'string' || body.model === '')
        throw ApiError.invalid([{ path: 'model', code: 'required', message: 'model must be a non-empty string.' }]);
      const localCount = countMessagesBody(body); // also validates the body
      const route = await resolveCallRoute(deps, principal, body.model, requestId);
      const engine = route.targets[0]?.engine;
      const countPath = engine && upstreamAdapter(engine.dialect).countTokensPath;
      if (engine && countPath) {
        const upstreamCount = await countUpstream(deps, engine, countPath, body, req);
        if (upstreamCount !== undefined) {
          out.json(200, { input_tokens: upstreamCount });
          return;
        }
      }
      out.json(200, { input_tokens: localCount });
    } catch (thrown) {
      const error = ApiError.from(thrown);
      if (error.status >= 500) deps.logger.error({ requestId, err: error.cause ?? error }, 'count_tokens failed');
      out.refuse(error);
    }
  };
}

async function countUpstream(
  deps: ModelCallDeps,
  engine: Engine,
  path: NonNullable<UpstreamAdapter['countTokensPath']>,
  body: Record<string, unknown>,
  req: IncomingMessage,
): Promise<number | undefined> {
  const sent: Record<string, unknown> = { ...body, model: engine.model };
  // Fallback models are the gateway's own field; no upstream is sent it.
  delete sent.models;
  const reply = deps.upstream.send({
    engine,
    path,
    body: JSON.stringify(sent),
    passHeaders: passHeadersOf(req.headers),
  });
  const timer = setTimeout(() => reply.abort(), 10_000);
  try {
    await reply.head;
    const text = await reply.text();
    if (reply.status !== 200) return undefined;
    const parsed = JSON.parse(text) as { input_tokens?: unknown };
    return typeof parsed.input_tokens === 'number' ? parsed.input_tokens : undefined;
  } catch {
    // An upstream that cannot count (404, down, slow) falls back to the local tokenizer.
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}
