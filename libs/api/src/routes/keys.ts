import { z } from 'zod';
import { LEGACY_SCOPES, PRESETS, SCOPES, TEAM_KEY_EXCLUDED } from '@sbc/scopes';
import { DateTime, listOf, pageQuery, Scope } from '../common';
import { defineRoute, type RouteSpec } from '../route';

const TAG = 'Keys';

const KEY_ROUTE_VALUES = ['byo', 'credits', 'auto'] as const;
const KEY_MODES = ['model', 'agent'] as const;
const KEY_PRESETS = Object.keys(PRESETS) as [keyof typeof PRESETS, ...(keyof typeof PRESETS)[]];
// Caps are kept in a 32-bit integer column.
const MAX_CREDITS = 2_147_483_647;
// The response cache keeps an entry for 30 days at most.
const MAX_CACHE_TTL_S = 2_592_000;

export const CallerKey = z
  .object({
    id: z.string().meta({ description: '`key_…`' }),
    object: z.literal('caller_key'),
    user_id: z.string(),
    name: z.string().meta({ description: 'What the tool calls itself, 1-64 chars.' }),
    mask: z.string().meta({
      description: 'The only form of the key shown after mint: prefix, 4 characters, an ellipsis, the last 4.',
    }),
    created_at: DateTime,
    last_used_at: DateTime.optional().meta({
      description: 'Kept current within seconds, without a write per request.',
    }),
    revoked_at: DateTime.optional(),
    daily_limit_tokens: z.number().int().optional().meta({ description: 'Daily spend cap in whole credits.' }),
    monthly_limit_tokens: z.number().int().optional().meta({ description: 'Monthly spend cap in whole credits.' }),
    caps_unit: z.enum(['credit']).optional(),
    allowed_models: z.array(z.string()).optional().meta({
      description: 'Glob allow-list over model names (`*` any run, `?` one character); absent means every model.',
    }),
    allowed_tools: z
      .array(z.string())
      .optional()
      .meta({
        description:
          'Glob allow-list over MCP tool names `<server>__<tool>` (`*` any run, `?` one character): the tools the ' +
          'key may list and call at `/mcp`; absent means every tool of its servers.',
      }),
    route: z.enum(KEY_ROUTE_VALUES),
    mode: z.enum(KEY_MODES),
    incognito: z.boolean(),
    cache_ttl_s: z.number().int().meta({
      description: 'Response cache: seconds a complete reply is kept and replayed for the same request (0: off).',
    }),
    cache_tools: z.boolean().meta({ description: 'Replies that ask for tool calls are cached too.' }),
    guardrails: z.array(z.string()).meta({
      description: "The guardrails the key's calls pass through (`grd_…`), besides its team's.",
    }),
    device_id: z.string().optional(),
    org_id: z.string().optional().meta({ description: 'Set on a team key.' }),
    rpm: z.number().int().optional().meta({ description: "The key's own requests per minute; absent: the service's." }),
    tpm: z.number().int().optional().meta({ description: "The key's own tokens per minute; absent: no token limit." }),
    scopes: z.array(Scope).meta({
      description:
        `The effective scopes: the stored list, or for a key minted without one the legacy set ` +
        `(${LEGACY_SCOPES.join(', ')}); a team key never holds ${TEAM_KEY_EXCLUDED.join(', ')}.`,
    }),
  })
  .loose()
  .meta({ id: 'CallerKey' });

export const MintedCallerKey = z
  .object({
    ...CallerKey.shape,
    key: z.string().meta({ description: 'The secret (`sbc_…`). Shown this once; only `mask` afterwards.' }),
  })
  .loose()
  .meta({ id: 'MintedCallerKey', description: 'A CallerKey with its secret, as minted.' });

const KeyName = z.string().min(1).max(64);
const ScopeList = z
  .array(Scope)
  .max(SCOPES.length * 2)
  .meta({ description: 'Every scope must be held by the calling key.' });
const Preset = z.enum(KEY_PRESETS).meta({
  description:
    'Gateway (`gateway:invoke`), Read-only (every `:read` scope) or Full access (every scope); instead of `scopes`.',
});
const ModelGlobs = z
  .array(z.string().min(1).max(256))
  .max(100)
  .meta({ description: "Within the calling key's own allow-list, if it has one." });
const ToolGlobs = z.array(z.string().min(1).max(200)).max(100).meta({
  description:
    "Globs over `<server>__<tool>` (e.g. `github__*`); within the calling key's own allow-list, if it has one.",
});
const Credits = z
  .number()
  .int()
  .min(0)
  .max(MAX_CREDITS)
  .meta({ description: "Whole credits; no higher than the calling key's cap, if it has one." });
const Route = z
  .enum(KEY_ROUTE_VALUES)
  .meta({ description: 'A calling key on `byo` or `credits` gives only its own route.' });
const PerMinute = (what: string) =>
  z
    .number()
    .int()
    .min(1)
    .max(MAX_CREDITS)
    .meta({ description: `${what} per minute for this key, within the service's ceiling (a larger one is 400).` });
const CacheTtl = z
  .number()
  .int()
  .min(0)
  .max(MAX_CACHE_TTL_S)
  .meta({ description: 'Response cache TTL in seconds (at most 30 days); 0 turns the cache off for this key.' });
const CacheTools = z.boolean().meta({
  description: 'Cache replies that ask for tool calls too (a hit replays the calls; off by default).',
});
const DeviceId = z.string().min(1).max(64).meta({ description: 'A device paired to this account.' });

const notBothScopesAndPreset = (body: { scopes?: unknown; preset?: unknown }) =>
  body.scopes === undefined || body.preset === undefined;
const NOT_BOTH = { message: 'Pass scopes or preset, not both.', path: ['preset'] };

const CreateKeyBody = z
  .strictObject({
    name: KeyName,
    scopes: ScopeList.optional(),
    preset: Preset.optional(),
    allowed_models: ModelGlobs.optional(),
    allowed_tools: ToolGlobs.optional(),
    daily_limit_tokens: Credits.optional(),
    monthly_limit_tokens: Credits.optional(),
    route: Route.default('auto'),
    mode: z.enum(KEY_MODES).default('model'),
    incognito: z.boolean().default(false),
    cache_ttl_s: CacheTtl.default(0),
    cache_tools: CacheTools.default(false),
    device_id: DeviceId.optional(),
    rpm: PerMinute('Requests').optional(),
    tpm: PerMinute('Tokens (the prompt and the output limit, corrected to the real count)').optional(),
    org_id: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .meta({ description: 'Mints a team key; the caller must be a member of the team.' }),
  })
  .refine(notBothScopesAndPreset, NOT_BOTH)
  .meta({ id: 'CreateCallerKey', description: 'Without `scopes` or `preset`, the key gets the Gateway preset.' });

const UpdateKeyBody = z
  .strictObject({
    name: KeyName.optional(),
    scopes: ScopeList.optional(),
    preset: Preset.optional(),
    allowed_models: ModelGlobs.nullable().optional().meta({ description: '`null` allows every model again.' }),
    allowed_tools: ToolGlobs.nullable().optional().meta({ description: '`null` allows every tool again.' }),
    daily_limit_tokens: Credits.nullable().optional().meta({ description: '`null` removes the cap.' }),
    monthly_limit_tokens: Credits.nullable().optional().meta({ description: '`null` removes the cap.' }),
    route: Route.optional(),
    mode: z.enum(KEY_MODES).optional(),
    incognito: z.boolean().optional(),
    cache_ttl_s: CacheTtl.nullable().optional().meta({ description: '`null` or 0 turns the cache off.' }),
    cache_tools: CacheTools.optional(),
    guardrails: z
      .array(z.string().min(1).max(64))
      .max(10)
      .optional()
      .meta({
        description:
          "Replaces the key's guardrails: the account's, or the key's team's (`[]` detaches all). A team's guardrail " +
          "is the team's policy: only a caller who may change the team's guardrails (`teams:write`, the team's " +
          'owner or an admin) takes one off a team key (403 `insufficient_scope` otherwise). The guardrails attached ' +
          'to the team itself apply to every team key whatever the key lists.',
      }),
    device_id: DeviceId.nullable().optional(),
    rpm: PerMinute('Requests').nullable().optional().meta({ description: '`null`: the service ceiling again.' }),
    tpm: PerMinute('Tokens').nullable().optional().meta({ description: '`null` removes the token limit.' }),
  })
  .refine(notBothScopesAndPreset, NOT_BOTH)
  .meta({ id: 'UpdateCallerKey', description: 'Fields left out keep their value.' });

const KeyIdParams = z.object({ id: z.string().min(1).max(64).meta({ description: '`key_…`' }) });

const NARROWER =
  'Never wider than the calling key (scopes, allowed models, caps, route, team): anything wider is 403 ' +
  '`insufficient_scope` with `param` naming the field. ' +
  "`builds:admin` is for the service's operators alone: a non-operator asking for it is 403, and their `full_access` " +
  'preset is every other scope.';
const NOT_OVER_WIDER =
  'A key never changes or revokes a key holding a scope it lacks: 403 `insufficient_scope`, `param` `id`, ' +
  '`required_scopes` naming them.';

export const listKeys = defineRoute({
  operationId: 'listKeys',
  method: 'get',
  path: '/v1/keys',
  summary: 'List caller keys',
  description: 'Every key of the account, revoked ones included, newest first. Secrets are never shown, only masks.',
  tag: TAG,
  auth: { kind: 'scoped', scopes: ['keys:read'] },
  query: pageQuery(),
  responses: { 200: { description: 'A page of keys.', schema: listOf(CallerKey, 'CallerKeyList') } },
});

export const createKey = defineRoute({
  operationId: 'createKey',
  method: 'post',
  path: '/v1/keys',
  summary: 'Create a caller key',
  description: `${NARROWER} The secret is in \`key\` of this answer and nowhere else.`,
  tag: TAG,
  auth: { kind: 'scoped', scopes: ['keys:write'] },
  body: CreateKeyBody,
  responses: { 201: { description: 'The key with its secret.', schema: MintedCallerKey } },
  errors: [404],
});

export const getCallingKey = defineRoute({
  operationId: 'getCallingKey',
  method: 'get',
  path: '/v1/keys/whoami',
  summary: 'Get the calling key',
  description: 'Any caller key, revoked ones excepted (403). A session or device token is not a key: 400.',
  tag: TAG,
  auth: { kind: 'any' },
  responses: { 200: { description: 'The calling key.', schema: CallerKey } },
  // 400: a session or device token is not a key.
  errors: [400],
});

export const updateKey = defineRoute({
  operationId: 'updateKey',
  method: 'patch',
  path: '/v1/keys/{id}',
  summary: 'Update a caller key',
  description:
    `${NARROWER} ${NOT_OVER_WIDER} Takes effect on the key's next call at every edge. A revoked key cannot ` +
    `be changed (409).`,
  tag: TAG,
  auth: { kind: 'scoped', scopes: ['keys:write'] },
  params: KeyIdParams,
  body: UpdateKeyBody,
  responses: { 200: { description: 'The key as changed.', schema: CallerKey } },
  errors: [404, 409],
});

export const revokeKey = defineRoute({
  operationId: 'revokeKey',
  method: 'delete',
  path: '/v1/keys/{id}',
  summary: 'Revoke a caller key',
  description:
    `Sets \`revoked_at\`; the key is refused with 403 on its next call at every edge, and only that key ` +
    `stops. Revoking again keeps the first time. ${NOT_OVER_WIDER}`,
  tag: TAG,
  auth: { kind: 'scoped', scopes: ['keys:write'] },
  params: KeyIdParams,
  responses: { 200: { description: 'The revoked key.', schema: CallerKey } },
  errors: [404],
});

export const KEY_ROUTES: RouteSpec[] = [listKeys, createKey, getCallingKey, updateKey, revokeKey];
