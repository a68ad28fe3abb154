import { z } from 'zod';
import { HOUSE_MODELS } from '@sbc/catalog';
import { betaPolicyIssues, isEmptyBetaPolicy } from '@sbc/api';
import type { AnthropicBetaPolicy, UpstreamDialect } from '@sbc/dialects';
import type { EgressCaller } from '@sbc/egress';

/**
 * Engines are the upstreams the service itself holds: house engines (`HOUSE_ENGINES`, per house model an
 * ordered list tried in turn) and provider engines (`PROVIDER_ENGINES`, per vendor one endpoint that serves
 * catalog models on credits). Both are JSON in the environment, validated once at start.
 */
export interface Engine {
  dialect: UpstreamDialect;
  /** As configured; `/v1` is optional (see endpointUrl). */
  baseUrl: string;
  apiKey?: string;
  /** Model id sent upstream. */
  model: string;
  headers: Record<string, string>;
  /** Who serves it, for usage (`provider`) and the models list (`reason`). */
  label: string;
  /**
   * Set on a caller's own endpoint: dialed through the egress policy for that caller. Unset on the operator's
   * configured engines, which are dialed as configured (the bundled simulator on loopback included).
   */
  dialAs?: EgressCaller;
  /** How the caller's `anthropic-beta` values reach an Anthropic-dialect engine; unset: as the caller sent them. */
  anthropicBeta?: AnthropicBetaPolicy;
}

export type HouseEngines = Record<string, Engine[]>;

/** One of the service's deployments of a vendor's API (an account, a region, a key), serving on credits. */
export interface ProviderDeployment extends Omit<Engine, 'model'> {
  /** Balances the vendor's deployments (0 = standby, tried only when the weighted ones fail). */
  weight: number;
  /** Requests and tokens per minute past which the deployment is skipped (never waited on). */
  rpm?: number;
  tpm?: number;
}

/** Per vendor, its deployments; a vendor configured with one endpoint has one deployment. */
export type ProviderEngines = Record<string, ProviderDeployment[]>;

const httpUrl = z.string().refine((value) => {
  try {
    return ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}, 'must be an http(s) URL');

/** `{drop?: [...], map?: {...}}`, as on a custom endpoint (libs/dialects anthropic-beta.ts). */
const anthropicBeta = z
  .strictObject({ drop: z.array(z.string()).optional(), map: z.record(z.string(), z.string()).optional() })
  .superRefine((policy, ctx) => {
    for (const issue of betaPolicyIssues(policy))
      ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  });

const endpoint = z.object({
  dialect: z.enum(['openai', 'anthropic']),
  base_url: httpUrl,
  api_key: z.string().min(1).optional(),
  headers: z.record(z.string(), z.string()).optional(),
  label: z.string().min(1).optional(),
  anthropic_beta: anthropicBeta.optional(),
});

const houseEngine = endpoint.extend({ model: z.string().min(1) });

const deployment = endpoint.extend({
  label: z.string().regex(/^[A-Za-z0-9._-]+$/, 'must be letters, digits, ".", "_" or "-"'),
  weight: z.number().int().min(0).max(100).default(1),
  rpm: z.number().int().positive().optional(),
  tpm: z.number().int().positive().optional(),
});

const deployments = z
  .array(deployment)
  .min(1)
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    list.forEach((item, index) => {
      if (seen.has(item.label)) ctx.addIssue({ code: 'custom', path: [index, 'label'], message: 'must be unique' });
      seen.add(item.label);
    });
  });

const json = z.string().transform((text, ctx) => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    ctx.addIssue({ code: 'custom', message: 'must be JSON' });
    return z.NEVER;
  }
});

function endpointOf(raw: z.infer<typeof endpoint>): Omit<Engine, 'model'> {
  const engine: Omit<Engine, 'model'> = {
    dialect: raw.dialect,
    baseUrl: raw.base_url,
    apiKey: raw.api_key,
    headers: raw.headers ?? {},
    label: raw.label ?? new URL(raw.base_url).host,
  };
  if (!isEmptyBetaPolicy(raw.anthropic_beta)) engine.anthropicBeta = raw.anthropic_beta;
  return engine;
}

/**
 * `{"house": [{dialect, base_url, api_key?, model, headers?, label?, anthropic_beta?}, …fallbacks], "house-fast": […]}`
 */
export const houseEnginesVar = json.pipe(
  z
    .partialRecord(z.enum(HOUSE_MODELS), z.array(houseEngine).min(1))
    .transform((map): HouseEngines =>
      Object.fromEntries(
        Object.entries(map).map(([id, list]) => [id, list.map((raw) => ({ ...endpointOf(raw), model: raw.model }))]),
      ),
    ),
);

function toDeployment(raw: z.infer<typeof endpoint> & { weight?: number; rpm?: number; tpm?: number }) {
  return { ...endpointOf(raw), weight: raw.weight ?? 1, rpm: raw.rpm, tpm: raw.tpm };
}

/**
 * `{"openai": {dialect, base_url, api_key, headers?, label?, anthropic_beta?}, "anthropic": [{label, dialect,
 * base_url, api_key, weight?, rpm?, tpm?, headers?, anthropic_beta?}, …]}`: per vendor one endpoint (one deployment
 * labelled by its host), or a list of deployments with labels unique to the vendor.
 */
export const providerEnginesVar = json.pipe(
  z
    .record(z.string().regex(/^[a-z0-9-]+$/), z.union([endpoint, deployments]))
    .transform((map): ProviderEngines =>
      Object.fromEntries(
        Object.entries(map).map(([vendor, raw]) => [
          vendor,
          Array.isArray(raw) ? raw.map(toDeployment) : [toDeployment(raw)],
        ]),
      ),
    ),
);

/**
 * The embedded default: every house model answers from the bundled simulator, `house-omni` in the Anthropic
 * dialect and the others in OpenAI's, so both upstream dialects are exercised out of the box (`house-embed`
 * needs OpenAI's: the Anthropic dialect has no embeddings).
 */
export function simulatorHouseEngines(simUrl: string): HouseEngines {
  const label = 'sim-upstream (bundled simulator)';
  const sim = (dialect: UpstreamDialect, model: string): Engine => ({
    dialect,
    baseUrl: simUrl,
    model,
    headers: {},
    label,
  });
  return {
    house: [sim('openai', 'sim-large')],
    'house-omni': [sim('anthropic', 'sim-large')],
    'house-fast': [sim('openai', 'sim-small')],
    'house-embed': [sim('openai', 'sim-embed')],
  };
}
