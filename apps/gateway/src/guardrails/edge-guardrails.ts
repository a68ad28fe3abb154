import {
  checkGuardrailConfig,
  DetectorSet,
  type DetectorsConfig,
  type JudgeConfig,
  type WebhookConfig,
} from '@sbc/guardrails';
import type { Guardrail } from '@sbc/proto/sbc/account/v1/guardrails_pb';

/** A guardrail as the edge applies it: compiled once, when its key's principal is cached. */
export interface EdgeGuardrail {
  id: string;
  name: string;
  kind: string;
  /** It checks what the caller sends, and what the call replies. */
  request: boolean;
  reply: boolean;
  detectors?: DetectorSet;
  webhook?: WebhookConfig & { secret: string };
  judge?: JudgeConfig;
}

/** The guardrails a principal's calls may meet, by id, and those every call passes through. */
export interface PrincipalGuardrails {
  byId: ReadonlyMap<string, EdgeGuardrail>;
  attached: readonly EdgeGuardrail[];
}

function compile(guardrail: Guardrail): EdgeGuardrail {
  const compiled: EdgeGuardrail = {
    id: guardrail.id,
    name: guardrail.name,
    kind: guardrail.kind,
    request: guardrail.appliesTo.length === 0 || guardrail.appliesTo.includes('request'),
    reply: guardrail.appliesTo.length === 0 || guardrail.appliesTo.includes('reply'),
  };
  let value: unknown;
  try {
    value = JSON.parse(guardrail.configJson);
  } catch {
    value = undefined;
  }
  const checked = checkGuardrailConfig(guardrail.kind, value);
  // The account service saved it checked; one that no longer reads (a newer kind) applies as a broken guardrail,
  // which blocks: a policy the edge cannot apply must not be skipped.
  if (!('config' in checked)) return compiled;
  if (guardrail.kind === 'detectors')
    compiled.detectors = new DetectorSet((checked.config as DetectorsConfig).detectors);
  else if (guardrail.kind === 'judge') compiled.judge = checked.config as JudgeConfig;
  else compiled.webhook = { ...(checked.config as WebhookConfig), secret: guardrail.webhookSecret };
  return compiled;
}

/** The principal's guardrails compiled, or undefined when it has none. */
export function compileGuardrails(
  guardrails: readonly Guardrail[],
  attachedIds: readonly string[],
): PrincipalGuardrails | undefined {
  if (guardrails.length === 0) return undefined;
  const byId = new Map(guardrails.map((guardrail) => [guardrail.id, compile(guardrail)]));
  const attached = attachedIds.flatMap((id) => byId.get(id) ?? []);
  return { byId, attached };
}
