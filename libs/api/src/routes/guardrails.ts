import { z } from 'zod';
import { DateTime, listOf, NO_CONTENT } from '../common';
import { defineRoute, type RouteAuth } from '../route';

const TAG = 'Guardrails';
const READ: RouteAuth = { kind: 'scoped', scopes: ['keys:read'] };
const WRITE: RouteAuth = { kind: 'scoped', scopes: ['keys:write'] };

const DetectorType = z.enum(['email', 'phone', 'card', 'iban', 'secret', 'regex', 'words']);
const Action = z.enum(['block', 'redact', 'log']).meta({
  description:
    '`block` refuses the call (400 `guardrail_blocked`; a streamed reply ends with an error event), `redact` ' +
    'replaces what was found with a typed placeholder (`[REDACTED:card]`), `log` only records it.',
});
export const Detector = z
  .strictObject({
    type: DetectorType.meta({
      description:
        'E-mail addresses, phone numbers, payment cards (Luhn-checked), IBANs (mod-97), secrets (API keys, tokens, ' +
        'private keys), an RE2 `regex` of your own (linear-time matching: backreferences and lookaround are ' +
        'refused), or a list of `words`.',
    }),
    action: Action,
    pattern: z.string().min(1).max(500).optional().meta({ description: '`regex` only: an RE2 pattern.' }),
    words: z
      .array(z.string().min(1).max(100))
      .min(1)
      .max(1_000)
      .optional()
      .meta({ description: '`words` only: whole words or phrases, matched ignoring case.' }),
  })
  .meta({ id: 'GuardrailDetector' });

const Sides = z
  .array(z.enum(['request', 'reply']))
  .max(2)
  .meta({ description: 'Which side of a call it checks; both when left out.' });
const Name = z.string().min(1).max(100);
const WebhookFields = {
  url: z
    .string()
    .max(2048)
    .meta({
      description:
        'Where the neutral request (and, after the call, the reply) is POSTed, signed as run webhooks are (Standard ' +
        'Webhooks). It answers `{"action": "allow" | "block"}`. The egress rules of custom endpoints apply.',
    }),
  timeout_ms: z.number().int().min(100).max(10_000).optional().meta({ description: 'Default 2000.' }),
  fail: z.enum(['open', 'closed']).optional().meta({
    description: 'A webhook that times out or fails: `open` lets the call go, `closed` (the default) blocks it.',
  }),
};

const Fail = z.enum(['open', 'closed']);
const JudgeFields = {
  model: z
    .string()
    .min(1)
    .max(200)
    .meta({
      description:
        'The model asked (`house` when left out), resolved and billed as a call of the key the guarded call came ' +
        'with: its allowed models, route and budget apply, and the judge call has a usage row of its own under ' +
        "the guarded call's request id.",
    }),
  question: z
    .string()
    .min(1)
    .max(2_000)
    .meta({
      description:
        "A yes/no question about the call's texts (the request, and after the call the reply); a yes blocks it. " +
        'For example: "Does this ask for medical advice?"',
    }),
  max_tokens: z.number().int().min(1).max(1_024).meta({ description: 'The most the judge answers with; default 64.' }),
  timeout_ms: z.number().int().min(100).max(30_000).meta({ description: 'Default 5000.' }),
  fail: Fail.meta({
    description:
      'A judge that times out, fails or answers neither yes nor no: `open` lets the call go, `closed` (the ' +
      'default) blocks it.',
  }),
};

export const CreateGuardrailBody = z
  .discriminatedUnion('kind', [
    z.strictObject({
      kind: z.literal('detectors'),
      name: Name,
      team_id: z.string().optional(),
      applies_to: Sides.optional(),
      detectors: z.array(Detector).min(1).max(20),
    }),
    z.strictObject({
      kind: z.literal('webhook'),
      name: Name,
      team_id: z.string().optional(),
      applies_to: Sides.optional(),
      ...WebhookFields,
    }),
    z.strictObject({
      kind: z.literal('judge'),
      name: Name,
      team_id: z.string().optional(),
      applies_to: Sides.optional(),
      model: JudgeFields.model.optional(),
      question: JudgeFields.question,
      max_tokens: JudgeFields.max_tokens.optional(),
      timeout_ms: JudgeFields.timeout_ms.optional(),
      fail: JudgeFields.fail.optional(),
    }),
  ])
  .meta({ id: 'GuardrailCreate' });

export const Guardrail = z
  .object({
    id: z.string().meta({ description: '`grd_…`' }),
    object: z.literal('guardrail'),
    name: z.string(),
    kind: z.enum(['detectors', 'webhook', 'judge']),
    team_id: z.string().nullable().meta({ description: "Set on a team's guardrail." }),
    applies_to: Sides,
    detectors: z.array(Detector).optional(),
    url: z.string().optional(),
    timeout_ms: z.number().int().optional(),
    fail: Fail.optional(),
    model: z.string().optional(),
    question: z.string().optional(),
    max_tokens: z.number().int().optional(),
    created_at: DateTime,
    updated_at: DateTime,
  })
  .loose()
  .meta({ id: 'Guardrail' });

const CreatedGuardrail = z
  .object({
    ...Guardrail.shape,
    webhook_secret: z
      .string()
      .optional()
      .meta({ description: "A webhook guardrail's signing secret (`whsec_…`), shown this once." }),
  })
  .loose()
  .meta({ id: 'CreatedGuardrail' });

const UpdateGuardrailBody = z
  .strictObject({
    name: Name.optional(),
    applies_to: Sides.optional(),
    detectors: z.array(Detector).min(1).max(20).optional(),
    url: WebhookFields.url.optional(),
    ...Object.fromEntries(Object.entries(JudgeFields).map(([key, schema]) => [key, schema.optional()])),
  })
  .meta({
    id: 'GuardrailUpdate',
    description: "Fields left out keep their value; the kind's settings given are merged over the stored ones.",
  });

const GuardrailParams = z.object({ id: z.string().min(1).max(64).meta({ description: '`grd_…`' }) });
const ListQuery = z.object({
  team_id: z.string().min(1).max(64).optional().meta({ description: "A team's guardrails instead of the account's." }),
});

const ACCESS =
  "A team's guardrails are read by its members and changed by its owners and admins, with a key that also holds " +
  '`teams:write` (403 `insufficient_scope` otherwise); any other guardrail is 404.';

export const listGuardrails = defineRoute({
  operationId: 'listGuardrails',
  method: 'get',
  path: '/v1/guardrails',
  summary: 'List guardrails',
  description: `The account's guardrails, or a team's (\`team_id\`), newest first. ${ACCESS}`,
  tag: TAG,
  auth: READ,
  query: ListQuery,
  responses: { 200: { description: 'The guardrails.', schema: listOf(Guardrail, 'GuardrailList') } },
  errors: [404],
});

export const createGuardrail = defineRoute({
  operationId: 'createGuardrail',
  method: 'post',
  path: '/v1/guardrails',
  summary: 'Create a guardrail',
  description:
    'A policy model calls pass through once it is attached to a key (`PATCH /v1/keys/{id}`) or a team ' +
    '(`PATCH /v1/teams/{team_id}`), or named by a call in `x-sbc-guardrails`. ' +
    ACCESS,
  tag: TAG,
  auth: WRITE,
  body: CreateGuardrailBody,
  responses: { 201: { description: 'The guardrail.', schema: CreatedGuardrail } },
  errors: [404, 409],
});

export const getGuardrail = defineRoute({
  operationId: 'getGuardrail',
  method: 'get',
  path: '/v1/guardrails/{id}',
  summary: 'Get a guardrail',
  description: ACCESS,
  tag: TAG,
  auth: READ,
  params: GuardrailParams,
  responses: { 200: { description: 'The guardrail.', schema: Guardrail } },
  errors: [404],
});

export const updateGuardrail = defineRoute({
  operationId: 'updateGuardrail',
  method: 'patch',
  path: '/v1/guardrails/{id}',
  summary: 'Update a guardrail',
  description: `Takes effect on the next call of every key it applies to, at every edge. ${ACCESS}`,
  tag: TAG,
  auth: WRITE,
  params: GuardrailParams,
  body: UpdateGuardrailBody,
  responses: { 200: { description: 'The guardrail as changed.', schema: Guardrail } },
  errors: [404],
});

export const deleteGuardrail = defineRoute({
  operationId: 'deleteGuardrail',
  method: 'delete',
  path: '/v1/guardrails/{id}',
  summary: 'Delete a guardrail',
  description: `Detaches it from every key and team first. ${ACCESS}`,
  tag: TAG,
  auth: WRITE,
  params: GuardrailParams,
  responses: { 204: NO_CONTENT },
  errors: [404],
});

export const testGuardrail = defineRoute({
  operationId: 'testGuardrail',
  method: 'post',
  path: '/v1/guardrails/{id}/test',
  summary: 'Test a guardrail on a sample text',
  description:
    'What a detectors guardrail makes of a text: blocked or not, and the text as redacted. No model is called and ' +
    `nothing is recorded. ${ACCESS}`,
  tag: TAG,
  auth: READ,
  params: GuardrailParams,
  body: z.strictObject({ text: z.string().max(100_000) }).meta({ id: 'GuardrailTest' }),
  responses: {
    200: {
      description: 'The verdict.',
      schema: z
        .object({
          blocked: z.boolean(),
          blocked_by: DetectorType.nullable().meta({ description: 'The detector that blocked, when one did.' }),
          text: z.string().meta({ description: 'The text with every redaction made.' }),
          redacted: z.array(DetectorType),
          logged: z.array(DetectorType),
        })
        .loose()
        .meta({ id: 'GuardrailTestResult' }),
    },
  },
  errors: [404],
});

export const GUARDRAIL_ROUTES = [
  listGuardrails,
  createGuardrail,
  getGuardrail,
  updateGuardrail,
  deleteGuardrail,
  testGuardrail,
];
