import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '@sbc/errors';
import { callerDialect, upstreamAdapter, type UpstreamAdapter } from '@sbc/dialects';
import { authorizeRequest } from '../auth/authorize';
import { requestIdFor } from '../http/request-id';
import type { Target } from '../routing/targets';
import { sendWithBetas } from '../upstream/beta-send';
import { passHeadersOf, type UpstreamCall } from '../upstream/client';
import { readJsonBody } from './body';
import { CallResponse } from './call-response';
import type { ModelCallDeps } from './handle-call';
import { countMessagesBody } from './count-tokens';
import { resolveCallRoute } from './route-call';

/** The dialect of `/v1/messages/count_tokens`, and of its refusals. */
export const MESSAGES = callerDialect('messages');

/** The reply header that says who counted: `upstream` (the target's own count route) or `tokenizer` (the edge). */
const COUNT_SOURCE_HEADER = 'x-sbc-count-source';

/** How long the target's count may take before the edge counts instead. */
const UPSTREAM_COUNT_TIMEOUT_MS = 10_000;

/**
 * `POST /v1/messages/count_tokens` (any key; `?beta=true` too). When one of the model's targets speaks a dialect
 * with a count route (Anthropic's), the first such target counts, with the caller's `anthropic-beta` values shaped
 * for it as a model call's are; otherwise, or when it cannot count, the o200k tokenizer counts here. Either way the
 * answer is `{input_tokens}`, and `x-sbc-count-source` says which counted (with `x-sbc-served-by` naming the target).
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
      const target = route.targets.find((candidate) => upstreamAdapter(candidate.engine.dialect).countTokensPath);
      const countPath = target && upstreamAdapter(target.engine.dialect).countTokensPath;
      if (target && countPath) {
        const upstreamCount = await countUpstream(deps, target, countPath, body, req, requestId);
        if (upstreamCount !== undefined) {
          out.addHeaders({ [COUNT_SOURCE_HEADER]: 'upstream', 'x-sbc-served-by': target.label });
          out.json(200, { input_tokens: upstreamCount });
          return;
        }
      }
      out.addHeaders({ [COUNT_SOURCE_HEADER]: 'tokenizer' });
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
  target: Target,
  path: NonNullable<UpstreamAdapter['countTokensPath']>,
  body: Record<string, unknown>,
  req: IncomingMessage,
  requestId: string,
): Promise<number | undefined> {
  const { engine } = target;
  const sent: Record<string, unknown> = { ...body, model: engine.model };
  // Fallback models are the gateway's own field; no upstream is sent it.
  delete sent.models;
  const bytes = JSON.stringify(sent);
  const send = (passHeaders: Record<string, string>) => deps.upstream.send({ engine, path, body: bytes, passHeaders });
  const passHeaders = passHeadersOf(req.headers);
  const header = passHeaders['anthropic-beta'];
  const betas = header === undefined ? undefined : deps.betas.sending(target, header, passHeaders);
  // The request in flight, aborted when the count takes too long (a re-send without refused betas included).
  let current: UpstreamCall | undefined;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    current?.abort();
  }, UPSTREAM_COUNT_TIMEOUT_MS);
  try {
    let reply: UpstreamCall;
    if (betas) {
      const hooks = {
        current: (call: UpstreamCall) => (current = call),
        mayResend: () => !timedOut,
        resending: () => undefined,
        requestId,
      };
      reply = (await sendWithBetas(send, betas, deps.betas, target, hooks)).reply;
    } else {
      reply = current = send(passHeaders);
      await reply.head;
    }
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
