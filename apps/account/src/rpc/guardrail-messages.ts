import type { MessageInitShape } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { GuardrailSchema } from '@sbc/proto/sbc/account/v1/guardrails_pb';
import type { GuardrailRow } from '../store/guardrails';
import type { SecretCipher } from '../store/secrets';

/** The cipher context a webhook guardrail's secret is sealed under: its own id, so it opens nowhere else. */
export const secretContext = (id: string) => `guardrail:${id}:webhook_secret`;

/** A guardrail as the RPCs return it; its webhook secret only when `secret` is given (create, and principals). */
export function toProtoGuardrail(row: GuardrailRow, secret?: string): MessageInitShape<typeof GuardrailSchema> {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    teamId: row.orgId ?? undefined,
    configJson: JSON.stringify(row.config),
    appliesTo: row.appliesTo,
    createdAt: timestampFromDate(row.createdAt),
    updatedAt: timestampFromDate(row.updatedAt),
    webhookSecret: secret ?? '',
  };
}

/** The webhook secret of a stored guardrail, opened for the edge that signs with it. */
export function openWebhookSecret(cipher: SecretCipher, row: GuardrailRow): string {
  return row.webhookSecret ? cipher.decrypt(row.webhookSecret, secretContext(row.id)) : '';
}
