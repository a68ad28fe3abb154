import type { MessageInitShape } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type {
  ProjectSchema,
  RunEventSchema,
  RunSchema,
  WebhookDeliverySchema,
  WebhookEndpointSchema,
  WorkspaceFileSchema,
} from '@sbc/proto/sbc/runs/v1/runs_pb';
import type { ProjectRow } from '../store/projects';
import type { StoredEvent } from '../store/events';
import { usageOf, type RunRow } from '../store/runs';
import { eventsOf, type DeliveryView, type WebhookEndpointRow } from '../store/webhooks';

const stamp = (date: Date | null) => (date ? timestampFromDate(date) : undefined);

export function toProtoProject(row: ProjectRow): MessageInitShape<typeof ProjectSchema> {
  return {
    id: row.id,
    name: row.name,
    instructions: row.instructions ?? undefined,
    defaultModel: row.defaultModel ?? undefined,
    createdAt: timestampFromDate(row.createdAt),
  };
}

export function toProtoRun(row: RunRow): MessageInitShape<typeof RunSchema> {
  const usage = usageOf(row);
  const error = row.error as { code?: string; message?: string } | null;
  return {
    id: row.id,
    projectId: row.projectId,
    status: row.status,
    model: row.model,
    prompt: row.prompt,
    output: row.output ?? undefined,
    error: error ? { code: error.code ?? 'internal_error', message: error.message ?? '' } : undefined,
    usage: {
      steps: usage.steps,
      modelCalls: usage.model_calls,
      toolCalls: usage.tool_calls,
      inputTokens: BigInt(usage.input_tokens),
      outputTokens: BigInt(usage.output_tokens),
    },
    metadataJson: JSON.stringify(row.metadata ?? {}),
    createdAt: timestampFromDate(row.createdAt),
    startedAt: stamp(row.startedAt),
    settledAt: stamp(row.settledAt),
    cancelRequestedAt: stamp(row.cancelRequestedAt),
    lastSeq: row.lastSeq,
  };
}

export function toProtoEvent(event: StoredEvent): MessageInitShape<typeof RunEventSchema> {
  return {
    runId: event.runId,
    seq: event.seq,
    type: event.type,
    dataJson: JSON.stringify(event.data),
    createdAt: timestampFromDate(event.createdAt),
  };
}

/**
 * A webhook endpoint as the audit log keeps it: never its signing secret, and its URL without a password or query
 * values (where a receiver's token often travels).
 */
export function webhookAuditView(row: WebhookEndpointRow) {
  const url = new URL(row.url);
  if (url.password) url.password = '[masked]';
  for (const name of [...url.searchParams.keys()]) url.searchParams.set(name, '[masked]');
  return {
    id: row.id,
    url: url.toString(),
    events: eventsOf(row),
    createdAt: row.createdAt,
    disabledAt: row.disabledAt,
  };
}

export function toProtoEndpoint(row: WebhookEndpointRow): MessageInitShape<typeof WebhookEndpointSchema> {
  return {
    id: row.id,
    url: row.url,
    events: eventsOf(row),
    createdAt: timestampFromDate(row.createdAt),
    disabledAt: stamp(row.disabledAt),
    disabledReason: row.disabledReason ?? undefined,
  };
}

export function toProtoDelivery(view: DeliveryView): MessageInitShape<typeof WebhookDeliverySchema> {
  return {
    id: view.delivery.id,
    eventId: view.event.id,
    eventType: view.event.type,
    runId: view.event.runId,
    status: view.delivery.status,
    attempts: view.attempts.map((attempt) => ({
      attempt: attempt.attempt,
      statusCode: attempt.statusCode ?? undefined,
      error: attempt.error ?? undefined,
      durationMs: attempt.durationMs,
      attemptedAt: timestampFromDate(attempt.attemptedAt),
    })),
    nextAttemptAt: stamp(view.delivery.nextAttemptAt),
    createdAt: timestampFromDate(view.delivery.createdAt),
  };
}

export function toProtoWorkspaceFile(file: {
  path: string;
  bytes: number;
  updated_at: string;
}): MessageInitShape<typeof WorkspaceFileSchema> {
  return { path: file.path, size: file.bytes, updatedAt: timestampFromDate(new Date(file.updated_at)) };
}
