import { z } from 'zod';
import { DateTime } from '../common';
import { defineRoute, type RouteSpec } from '../route';

// The console playground's view of a model call from the upstream's side (issue 43, item 6).

const CapturedHeaders = z
  .record(z.string(), z.string())
  .meta({ description: 'Header names as sent or received; credentials and unknown headers read `[redacted]`.' });

const CapturedAttempt = z
  .object({
    upstream_dialect: z.enum(['openai', 'anthropic']),
    model: z.string().meta({ description: 'The model id sent upstream.' }),
    method: z.literal('POST'),
    path: z.string().meta({ description: 'The upstream path, without its query.' }),
    url: z
      .string()
      .nullable()
      .meta({ description: "The full address for the caller's own endpoint; null for the service's engines." }),
    request: z.object({
      headers: CapturedHeaders,
      body: z.string().meta({ description: 'The body as sent, in the upstream dialect, secrets withheld.' }),
      truncated_bytes: z.number().int().meta({ description: 'Bytes past the 256 KiB kept.' }),
    }),
    response: z
      .object({
        status: z.number().int(),
        headers: CapturedHeaders,
        body: z.string().meta({ description: 'The reply as received: JSON, or the raw server-sent events.' }),
        truncated_bytes: z.number().int(),
      })
      .nullable()
      .meta({ description: 'Null when the upstream never answered (see `error`).' }),
    error: z.string().nullable(),
  })
  .meta({ id: 'CapturedAttempt' });

export const CallCapture = z
  .object({
    object: z.literal('call_capture'),
    call_request_id: z
      .string()
      .meta({ description: "The captured call's request id (`request_id` is this read's own, as on every answer)." }),
    created_at: DateTime,
    dialect: z.enum(['chat', 'responses', 'messages']).meta({ description: 'The dialect the caller used.' }),
    model: z.string().meta({ description: 'The model that answered, as the caller named it.' }),
    stream: z.boolean(),
    attempts: z.array(CapturedAttempt).meta({ description: 'Every upstream attempt, in order (fallbacks, retries).' }),
    usage: z
      .object({
        status: z.number().int(),
        served_by: z.string(),
        attempts: z.number().int(),
        input_tokens: z.number().int(),
        output_tokens: z.number().int(),
        cache_read_tokens: z.number().int(),
        cache_write_tokens: z.number().int(),
        total_cost: z.number().meta({ description: 'USD at list price, as the usage row.' }),
        credits_charged: z.number(),
        is_byok: z.boolean(),
        latency_ms: z.number().int(),
        ttft_ms: z.number().int(),
      })
      .meta({ description: "The call's usage row as the edge recorded it." }),
  })
  .loose()
  .meta({ id: 'CallCapture' });

export const getCallCapture = defineRoute({
  operationId: 'getCallCapture',
  method: 'get',
  path: '/v1/usage/requests/{request_id}/capture',
  summary: "A call's upstream exchange",
  description:
    'What the upstream received and sent back for one model call, each in its own dialect: made only when a ' +
    'signed-in session sent the call with `x-sbc-capture: 1` (the console playground; a key asking is ignored), ' +
    'kept 10 minutes, readable by that account alone (404 for anyone else). Credentials are never kept: ' +
    'Authorization, x-api-key and every header not known to be harmless read `[redacted]`, and ' +
    'secret-looking strings in bodies are withheld. Each body is kept up to 256 KiB.',
  tag: 'Usage',
  auth: { kind: 'session' },
  params: z.object({ request_id: z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/, 'Expected a request id.') }),
  responses: { 200: { description: 'The capture.', schema: CallCapture } },
  errors: [404],
});

export const CAPTURE_ROUTES: readonly RouteSpec[] = [getCallCapture];
