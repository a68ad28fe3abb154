import type { MessageInitShape } from '@bufbuild/protobuf';
import { timestampDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import { listEnvelope, mapPage, type ListEnvelope } from '@sbc/pagination';
import type { CallerKey } from '@sbc/proto/sbc/account/v1/account_pb';
import type {
  Project,
  Run,
  RunCallerSchema,
  RunEvent,
  WebhookDelivery,
  WebhookEndpoint,
  WorkspaceFile,
} from '@sbc/proto/sbc/runs/v1/runs_pb';

const iso = (value: Timestamp | undefined) => (value ? timestampDate(value).toISOString() : undefined);
/** The field only when it has a value (the spec's optional fields are left out rather than null). */
const some = <T>(name: string, value: T | undefined) => (value === undefined ? {} : { [name]: value });

/**
 * Who starts a run, with the bounds of the key that does: the run's model-call key is minted within them.
 * Sessions and device tokens are not bounded by a key.
 */
export function runCaller(
  userId: string,
  key: CallerKey | undefined,
  operator: boolean,
): MessageInitShape<typeof RunCallerSchema> {
  return {
    userId,
    operator,
    keyId: key?.id,
    allowedModels: key?.allowedModels?.values ?? [],
    modelsLimited: key?.allowedModels !== undefined,
    dailyLimitCredits: key?.dailyLimitCredits,
    monthlyLimitCredits: key?.monthlyLimitCredits,
    route: key?.route || 'auto',
    orgId: key?.orgId,
  };
}

export function renderProject(project: Project): Record<string, unknown> {
  return {
    id: project.id,
    object: 'project',
    name: project.name,
    ...some('instructions', project.instructions),
    ...some('default_model', project.defaultModel),
    created_at: iso(project.createdAt),
  };
}

export function renderRun(run: Run): Record<string, unknown> {
  const usage = run.usage;
  return {
    id: run.id,
    object: 'run',
    project_id: run.projectId,
    status: run.status,
    model: run.model,
    prompt: run.prompt,
    ...some('output', run.output),
    ...some('error', run.error && { code: run.error.code, message: run.error.message }),
    usage: {
      steps: usage?.steps ?? 0,
      model_calls: usage?.modelCalls ?? 0,
      tool_calls: usage?.toolCalls ?? 0,
      input_tokens: Number(usage?.inputTokens ?? 0),
      output_tokens: Number(usage?.outputTokens ?? 0),
    },
    metadata: JSON.parse(run.metadataJson || '{}') as Record<string, string>,
    created_at: iso(run.createdAt),
    ...some('started_at', iso(run.startedAt)),
    ...some('settled_at', iso(run.settledAt)),
    ...some('cancel_requested_at', iso(run.cancelRequestedAt)),
  };
}

export function renderEvent(event: RunEvent): Record<string, unknown> {
  return {
    object: 'run.event',
    run_id: event.runId,
    seq: event.seq,
    type: event.type,
    data: JSON.parse(event.dataJson || '{}') as unknown,
    created_at: iso(event.createdAt),
  };
}

export function renderEndpoint(endpoint: WebhookEndpoint): Record<string, unknown> {
  return {
    id: endpoint.id,
    object: 'webhook_endpoint',
    url: endpoint.url,
    events: endpoint.events,
    created_at: iso(endpoint.createdAt),
    ...some('disabled_at', iso(endpoint.disabledAt)),
    ...some('disabled_reason', endpoint.disabledReason),
  };
}

export function renderDelivery(delivery: WebhookDelivery): Record<string, unknown> {
  return {
    id: delivery.id,
    object: 'webhook_delivery',
    event_id: delivery.eventId,
    event_type: delivery.eventType,
    run_id: delivery.runId,
    status: delivery.status,
    attempts: delivery.attempts.map((attempt) => ({
      attempt: attempt.attempt,
      ...some('status_code', attempt.statusCode),
      ...some('error', attempt.error),
      duration_ms: attempt.durationMs,
      attempted_at: iso(attempt.attemptedAt),
    })),
    ...some('next_attempt_at', iso(delivery.nextAttemptAt)),
    created_at: iso(delivery.createdAt),
  };
}

export function renderWorkspaceFile(file: WorkspaceFile): Record<string, unknown> {
  return { object: 'workspace_file', path: file.path, size: file.size, updated_at: iso(file.updatedAt) };
}

/** The list envelope (CONTRACTS "Lists") over rendered items with ids. */
export function renderedList<T extends { id: string }>(
  items: T[],
  hasMore: boolean,
  render: (item: T) => Record<string, unknown>,
): ListEnvelope<Record<string, unknown>> {
  return mapPage(
    listEnvelope(items, hasMore, (item) => item.id),
    render,
  );
}
