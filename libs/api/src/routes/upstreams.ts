import { z } from 'zod';
import { betaPolicyIssues, DROP_ALL_BETAS, MAX_BETA_RULES, MAX_BETA_VALUE_LENGTH } from '../anthropic-beta-policy';
import { DateTime, NO_CONTENT, pageQuery } from '../common';
import { defineRoute } from '../route';

const ENDPOINTS = 'Custom endpoints';
const ALIASES = 'Aliases';

/** The probe's connect-plus-answer limit (apps/account PROBE_TIMEOUT_MS), for the descriptions. */
const PROBE_TIMEOUT_S = 5;

// RFC 9110 token characters: anything else cannot be sent as a header name.
const HeaderName = z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'Not a valid header name.');
const Slug = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]{0,47}$/, 'A slug is 1-48 of a-z, 0-9 and "-", starting with a letter or digit.')
  .meta({ description: 'The endpoint id; `custom` names the legacy singleton.' });
const ModelIds = z.array(z.string().min(1).max(256)).max(1_000);
const DialectIn = z.enum(['openai', 'anthropic', 'auto']);

const WEIGHT_MEANING =
  "Share of a model's calls among your endpoints listing it, 0-100: an endpoint of weight 3 gets about three " +
  'times the calls of one of weight 1. 0 is standby: tried only when your other endpoints listing the model fail.';
const Weight = z.number().int().min(0).max(100);

const ANTHROPIC_BETA_MEANING =
  "How the `anthropic-beta` values a caller sends reach this endpoint when it speaks Anthropic's dialect (they never " +
  'reach an OpenAI-dialect one). Each value `map` names is sent as its mapped value; of the rest, those `drop` ' +
  `lists (\`${DROP_ALL_BETAS}\` for every value \`map\` does not name) are not sent; the others go as the caller ` +
  'sent them. First-party Anthropic takes every beta it knows; endpoints fronting Claude on Bedrock or Vertex refuse ' +
  'ones they do not, and the gateway also learns those by itself: a 400 naming a refused value is retried once ' +
  'without it, and that value is left out for this endpoint for the next hour.';
const BetaPolicyOut = z
  .object({
    drop: z.array(z.string()),
    map: z.record(z.string(), z.string()),
  })
  .meta({ id: 'AnthropicBetaPolicy', description: ANTHROPIC_BETA_MEANING });
const BetaPolicyIn = z
  .strictObject({
    drop: z
      .array(z.string())
      .optional()
      .meta({
        description:
          `Values not to send (or \`${DROP_ALL_BETAS}\`): at most ${MAX_BETA_RULES}, each 1-${MAX_BETA_VALUE_LENGTH} ` +
          'header-token characters.',
      }),
    map: z
      .record(z.string(), z.string())
      .optional()
      .meta({ description: `Value sent → value the endpoint takes instead: at most ${MAX_BETA_RULES} entries.` }),
  })
  .superRefine((policy, ctx) => {
    for (const issue of betaPolicyIssues(policy))
      ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  })
  .meta({ id: 'AnthropicBetaPolicyWrite', description: ANTHROPIC_BETA_MEANING });

export const UpstreamProbe = z
  .object({
    ok: z.boolean(),
    models_found: z.number().int().optional().meta({ description: 'How many models the endpoint listed.' }),
    error: z
      .string()
      .optional()
      .meta({ description: 'Why the probe failed, in words (refused, timed out, the HTTP status and message).' }),
    at: z.string().optional().meta({ description: 'When the probe ran (date-time).' }),
    dialect: z
      .enum(['openai', 'anthropic'])
      .optional()
      .meta({
        description:
          'The dialect that answered; on a failed probe, the one the endpoint last answered in (the gateway keeps ' +
          'speaking it).',
      }),
    dialect_reason: z
      .string()
      .optional()
      .meta({
        description:
          'For an `auto` endpoint: why it was taken to speak ' +
          "`dialect` (which probes answered, the model list's shape, " +
          'or which one-token call was answered).',
      }),
  })
  .loose()
  .meta({ id: 'UpstreamProbe' });

export const Upstream = z
  .object({
    id: z.string().meta({ description: 'The row id (`ups_…`): the cursor of the endpoint list.' }),
    slug: z.string().meta({
      description:
        'The endpoint id, used in paths and in model ids (`<slug>/<model>`); `custom` for the legacy singleton.',
    }),
    label: z.string(),
    base_url: z.string().meta({ description: 'As saved; with or without its `/v1` segment.' }),
    dialect: z.enum(['openai', 'anthropic']).meta({
      description: 'What the gateway speaks to it: for an endpoint saved as `auto`, the dialect its probe found.',
    }),
    dialect_setting: DialectIn.meta({
      description: 'The dialect as saved; `auto` endpoints are probed in both dialects.',
    }),
    headers: z
      .record(z.string(), z.string())
      .optional()
      .meta({ description: 'Extra header names; every value is shown as `••••`.' }),
    models: z.array(z.string()).optional(),
    model_names: z.record(z.string(), z.string()).optional().meta({ description: 'Model id → display name.' }),
    model_meta: z.record(z.string(), z.unknown()).optional(),
    probe: UpstreamProbe.optional().meta({ description: 'The last probe report; absent when never probed.' }),
    probed_at: DateTime.optional().meta({ description: 'When the endpoint last answered a probe.' }),
    weight: Weight.meta({ description: WEIGHT_MEANING }),
    anthropic_beta: BetaPolicyOut.nullable().meta({
      description: 'null: every `anthropic-beta` value goes as the caller sent it.',
    }),
    created_at: DateTime.optional(),
    updated_at: z.string().optional(),
  })
  .loose()
  .meta({ id: 'Upstream', description: 'A custom endpoint. The stored API key is never returned.' });

export const UpstreamWithProbe = z
  .object({
    upstream: Upstream,
    probe: UpstreamProbe.meta({ description: 'The probe just run, or the last one when none ran.' }),
  })
  .loose()
  .meta({ id: 'UpstreamWithProbe' });

export const UpstreamList = z
  .object({
    object: z.literal('list'),
    data: z.array(Upstream),
    has_more: z.boolean(),
    first_id: z.string().nullable().meta({ description: 'Pass as before_id for the previous page.' }),
    last_id: z.string().nullable().meta({ description: 'Pass as after_id for the next page.' }),
    upstreams: z.array(Upstream).meta({ description: 'Legacy: the same rows as `data`.' }),
  })
  .loose()
  .meta({ id: 'UpstreamList' });

const SlugParams = z.object({ slug: z.string().min(1).max(64).meta({ description: 'The endpoint slug.' }) });

const PROBING =
  `A probe dials \`GET {base_url}/v1/models\` (\`/v1\` added when the base URL lacks it): OpenAI with ` +
  `\`Authorization: Bearer\`, Anthropic with \`x-api-key\` and \`anthropic-version: 2023-06-01\`, the endpoint's own ` +
  `headers on top; \`auto\` asks in both dialects at once and keeps the one that answered (OpenAI when both do, ` +
  `unless the host names Anthropic). Each dialect gets ${PROBE_TIMEOUT_S} s to connect and answer. An answered probe ` +
  `folds the listed models in: \`models\` becomes what the endpoint lists followed by models named by hand, and ` +
  `listed display names fill \`model_names\`. A failed probe changes only the report (\`probe.ok\` false with the ` +
  `reason).`;

export const listUpstreams = defineRoute({
  operationId: 'listUpstreams',
  method: 'get',
  path: '/v1/upstreams',
  summary: 'List custom endpoints',
  description:
    'Every custom endpoint on the account, newest first; `after_id` / `before_id` take the row `id` (`ups_…`).',
  tag: ENDPOINTS,
  auth: { kind: 'scoped', scopes: ['endpoints:read'] },
  query: pageQuery(),
  responses: {
    200: { description: 'A page of endpoints; `upstreams` repeats `data` for older clients.', schema: UpstreamList },
  },
});

export const createUpstream = defineRoute({
  operationId: 'createUpstream',
  rateCost: 10,
  method: 'post',
  path: '/v1/upstreams',
  summary: 'Add a custom endpoint and probe it',
  description:
    `Saves the endpoint, then probes it; a failed probe still saves. The slug is derived from the label ` +
    `(lowercase, dashes; \`-2\`, \`-3\`… when taken), so a ` +
    `first endpoint labelled "Custom" is the legacy \`custom\`; ` +
    `\`slug\` asks for one outright (409 when taken). A \`base_url\` the egress policy refuses for the caller is 400 ` +
    `\`invalid_request\` (param \`base_url\`): link-local, documentation and other special ranges, ` +
    `IPv4-mapped/compatible and NAT64 spellings, and the gateway itself for everyone; loopback and private ` +
    `addresses unless the caller is an operator (\`EGRESS_PRIVATE\`). The same check runs on the resolved address ` +
    `whenever the endpoint is dialed. ${PROBING}`,
  tag: ENDPOINTS,
  auth: { kind: 'scoped', scopes: ['endpoints:write'] },
  body: z
    .strictObject({
      label: z.string().trim().min(1).max(128),
      base_url: z
        .url({ protocol: /^https?$/ })
        .max(2_048)
        .meta({ description: 'An http(s) URL, with or without its `/v1` segment.' }),
      api_key: z
        .string()
        .max(4_096)
        .meta({ description: 'Stored encrypted, never returned; an empty string for an endpoint that needs none.' }),
      dialect: DialectIn.default('auto').meta({
        description: 'Default `auto`: probe both dialects and keep the one that answers.',
      }),
      headers: z
        .record(HeaderName, z.string().max(8_192))
        .optional()
        .meta({ description: 'Extra headers sent with every call; values stored encrypted.' }),
      models: ModelIds.optional().meta({ description: 'Models to route to besides those the endpoint lists.' }),
      slug: Slug.optional(),
      weight: Weight.optional().meta({ description: `${WEIGHT_MEANING} Default 1.` }),
      anthropic_beta: BetaPolicyIn.nullable().optional(),
    })
    .meta({ id: 'UpstreamCreate' }),
  responses: { 201: { description: 'The saved endpoint and its probe report.', schema: UpstreamWithProbe } },
  errors: [409],
});

export const updateUpstream = defineRoute({
  operationId: 'updateUpstream',
  rateCost: 10,
  method: 'patch',
  path: '/v1/upstreams/{slug}',
  summary: 'Edit a custom endpoint',
  description:
    `Absent fields keep what is stored. When the dial changed (\`base_url\`, \`dialect\`, \`api_key\` or ` +
    `\`headers\` differ from what is stored) the endpoint is re-probed, and the models the old dial listed give way ` +
    `to what the new one lists plus this edit's \`models\`; otherwise \`probe\` is the last report. \`models\` and ` +
    `\`model_names\` replace the stored ones. ${PROBING}`,
  tag: ENDPOINTS,
  auth: { kind: 'scoped', scopes: ['endpoints:write'] },
  params: SlugParams,
  body: z
    .strictObject({
      label: z.string().trim().min(1).max(128).optional(),
      base_url: z
        .url({ protocol: /^https?$/ })
        .max(2_048)
        .optional(),
      dialect: DialectIn.optional(),
      api_key: z.string().max(4_096).optional(),
      headers: z
        .record(HeaderName, z.string().max(8_192))
        .optional()
        .meta({ description: 'Replaces every stored header.' }),
      models: ModelIds.optional(),
      model_names: z.record(z.string().min(1).max(256), z.string().max(256)).optional(),
      weight: Weight.optional().meta({ description: WEIGHT_MEANING }),
      anthropic_beta: BetaPolicyIn.nullable()
        .optional()
        .meta({ description: 'Replaces the stored policy; null removes it.' }),
    })
    .meta({ id: 'UpstreamUpdate' }),
  responses: { 200: { description: 'The edited endpoint and its last probe.', schema: UpstreamWithProbe } },
  errors: [404],
});

export const deleteUpstream = defineRoute({
  operationId: 'deleteUpstream',
  method: 'delete',
  path: '/v1/upstreams/{slug}',
  summary: 'Remove a custom endpoint',
  description: 'Removes the endpoint and its stored key; its models stop routing at once.',
  tag: ENDPOINTS,
  auth: { kind: 'scoped', scopes: ['endpoints:write'] },
  params: SlugParams,
  responses: { 204: NO_CONTENT },
  errors: [404],
});

export const probeUpstream = defineRoute({
  operationId: 'probeUpstream',
  rateCost: 10,
  method: 'post',
  path: '/v1/upstreams/{slug}/probe',
  summary: 'Probe a custom endpoint',
  description:
    `Dials the stored endpoint and folds what it lists into the row; models listed before stay. A failed ` +
    `probe is still 200, with \`probe.ok\` false. ${PROBING}`,
  tag: ENDPOINTS,
  auth: { kind: 'scoped', scopes: ['endpoints:write'] },
  params: SlugParams,
  responses: { 200: { description: 'The endpoint and the probe just run.', schema: UpstreamWithProbe } },
  errors: [404],
});

export const Alias = z
  .object({
    token: z.string().meta({ description: 'The @mention token, with its "@".' }),
    vendor: z.string(),
    model_id: z.string(),
    label: z.string(),
    tier: z.string(),
    custody: z.string().meta({ description: '`envelope` or `device-held`.' }),
    available: z.boolean().meta({
      description:
        "Whether the vendor is linked: one of the caller's endpoints lists the model, or the service holds an engine " +
        'for the vendor (house models: a house engine).',
    }),
    source: z.enum(['personal', 'built_in', 'catalog']).meta({ description: 'Where the alias comes from.' }),
    rev: z
      .number()
      .int()
      .optional()
      .meta({ description: "Personal aliases: the account's alias revision at this alias's last write." }),
  })
  .loose()
  .meta({ id: 'Alias' });

export const AliasWrite = z
  .object({
    ok: z.literal(true),
    token: z.string().meta({ description: 'With its "@".' }),
    rev: z.number().int().meta({ description: "The account's alias revision after the write." }),
  })
  .loose()
  .meta({ id: 'AliasWrite' });

const TokenParams = z.object({
  token: z
    .string()
    .regex(
      /^@?[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/,
      'A token is 1-64 of letters, digits, ".", "_" and "-", after an optional "@".',
    )
    .meta({ description: 'With or without its "@", any case (`@Claude` and `claude` name one alias).' }),
});

export const listAliases = defineRoute({
  operationId: 'listAliases',
  method: 'get',
  path: '/v1/aliases',
  summary: 'List aliases',
  description:
    "The caller's own aliases (by token), then the built-in " +
    'ones a personal alias does not shadow, then every catalog ' +
    "model as `@<model id>`. The response carries the account's `x-alias-rev`.",
  tag: ALIASES,
  auth: { kind: 'scoped', scopes: ['endpoints:read'] },
  responses: {
    200: { description: 'Own, built-in, then catalog aliases.', schema: z.array(Alias).meta({ id: 'AliasList' }) },
  },
});

export const putAlias = defineRoute({
  operationId: 'putAlias',
  method: 'put',
  path: '/v1/aliases/{token}',
  summary: 'Create or overwrite a personal alias',
  description:
    'Without `model_id`, the token names the model: a built-in ' +
    "alias's model, else the token itself. `label` defaults " +
    "to the catalog's name for the model, `custody` to `envelope`. " +
    "The account's alias revision increases, and paired " +
    'devices hear of it on GET /v1/aliases/events.',
  tag: ALIASES,
  auth: { kind: 'scoped', scopes: ['endpoints:write'] },
  params: TokenParams,
  body: z
    .strictObject({
      vendor: z.string().min(1).max(64),
      model_id: z.string().min(1).max(256).optional(),
      label: z.string().trim().min(1).max(128).optional(),
      custody: z.enum(['envelope', 'device-held']).optional(),
    })
    .meta({ id: 'AliasPut' }),
  responses: { 200: { description: 'Saved.', schema: AliasWrite } },
});

export const deleteAlias = defineRoute({
  operationId: 'deleteAlias',
  method: 'delete',
  path: '/v1/aliases/{token}',
  summary: 'Delete a personal alias',
  description:
    'Deletes the personal alias on every device: the revision increases and paired devices hear of it. Deleting a ' +
    'token the account has no personal alias for (a built-in one included) changes nothing and answers 200 with the ' +
    'current revision.',
  tag: ALIASES,
  auth: { kind: 'scoped', scopes: ['endpoints:write'] },
  params: TokenParams,
  responses: { 200: { description: 'Deleted, or nothing to delete.', schema: AliasWrite } },
});

export const ALIAS_HEARTBEAT_S = 15;

export const aliasEvents = defineRoute({
  operationId: 'streamAliasEvents',
  method: 'get',
  path: '/v1/aliases/events',
  summary: 'Follow alias changes (server-sent events)',
  description: [
    'How paired devices learn of alias changes. A `text/event-stream` that stays open:',
    '`event: alias.sync` first, data `{rev, stale}`: the current revision, and whether it moved past `since_rev` (or ' +
      '`Last-Event-ID`), i.e. whether the device should re-read GET /v1/aliases;',
    '`event: alias.changed` for every later write or delete on the account, with `id:` the new revision and data ' +
      '`{token, rev, deleted}`;',
    `a \`: heartbeat\` comment every ${ALIAS_HEARTBEAT_S} s. Changes are not replayed: after a gap, compare revisions.`,
  ].join(' '),
  tag: ALIASES,
  auth: { kind: 'scoped', scopes: ['endpoints:read'] },
  query: z.object({
    since_rev: z.coerce.number().int().min(0).optional().meta({ description: 'The last revision the device saw.' }),
  }),
  responses: { 200: { description: 'The event stream.', contentType: 'text/event-stream', schema: z.string() } },
});

export const UPSTREAM_ROUTES = [
  listUpstreams,
  createUpstream,
  updateUpstream,
  deleteUpstream,
  probeUpstream,
  listAliases,
  aliasEvents,
  putAlias,
  deleteAlias,
];
