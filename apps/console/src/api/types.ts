// The API's shapes the pages name, inferred from the very zod schemas the edge validates with and documents
// (libs/api); only types cross over, so no schema code ships to the browser. What a call answers needs no name
// here: api/routes.ts types each answer from its route's spec.
import type { z } from 'zod';
import type {
  auditRoutes,
  authRoutes,
  batchRoutes,
  captureRoutes,
  deviceRoutes,
  fileRoutes,
  guardrailRoutes,
  keyRoutes,
  mcpServerRoutes,
  messageBatchRoutes,
  runRoutes,
  teamRoutes,
  upstreamRoutes,
  usageRoutes,
  xBuildRoutes,
} from '@sbc/api';

type BodyOf<R extends { body?: z.ZodType }> = z.input<NonNullable<R['body']>>;

export type ConsoleSession = z.output<typeof authRoutes.ConsoleSession>;
export type SignInBody = BodyOf<typeof authRoutes.createConsoleSession>;

export type UsageBreakdown = z.output<typeof usageRoutes.UsageBreakdown>;
export type UsageMetrics = z.output<typeof usageRoutes.UsageMetrics>;
export type UsageGeneration = z.output<typeof usageRoutes.UsageGeneration>;
export type Credits = z.output<typeof usageRoutes.Credits>;
export type Spend = z.output<typeof usageRoutes.Spend>;

export type CallerKey = z.output<typeof keyRoutes.CallerKey>;
export type MintedKey = z.output<typeof keyRoutes.MintedCallerKey>;
export type CreateKeyBody = BodyOf<typeof keyRoutes.createKey>;
export type UpdateKeyBody = BodyOf<typeof keyRoutes.updateKey>;

// The API's upstream is the console's endpoint (see api/routes.ts). These types keep the API's names because the
// Endpoints page imports them so; renaming them there is a follow-up kept apart from that page's other edits.
export type Upstream = z.output<typeof upstreamRoutes.Upstream>;
export type UpstreamProbe = z.output<typeof upstreamRoutes.UpstreamProbe>;
export type UpstreamWithProbe = z.output<typeof upstreamRoutes.UpstreamWithProbe>;
export type CreateUpstreamBody = BodyOf<typeof upstreamRoutes.createUpstream>;
export type UpdateUpstreamBody = BodyOf<typeof upstreamRoutes.updateUpstream>;

export type ToolServer = z.output<typeof mcpServerRoutes.McpServer>;
export type TeamToolServer = z.output<typeof mcpServerRoutes.TeamToolServer>;
export type ToolServerProbe = z.output<typeof mcpServerRoutes.McpServerProbe>;
export type ToolServerWithProbe = z.output<typeof mcpServerRoutes.McpServerWithProbe>;
export type CreateToolServerBody = BodyOf<typeof mcpServerRoutes.createMcpServer>;

export type Batch = z.output<typeof batchRoutes.BatchObject>;
export type BatchStatus = Batch['status'];
export type BatchEndpoint = BodyOf<typeof batchRoutes.createBatch>['endpoint'];
export type StoredFile = z.output<typeof fileRoutes.FileObject>;
export type MessageBatch = z.output<typeof messageBatchRoutes.MessageBatchObject>;
export type MessageBatchCounts = MessageBatch['request_counts'];
export type MessageBatchRequest = BodyOf<typeof messageBatchRoutes.createMessageBatch>['requests'][number];

export type Alias = z.output<typeof upstreamRoutes.Alias>;
export type AliasPutBody = BodyOf<typeof upstreamRoutes.putAlias>;

export type PairingDecision = z.output<typeof deviceRoutes.PairingDecision>;
export type Device = z.output<typeof deviceRoutes.Device>;

export type AuditEvent = z.output<typeof auditRoutes.AuditEvent>;
export type AuditResourceType = AuditEvent['resource']['type'];

export type Guardrail = z.output<typeof guardrailRoutes.Guardrail>;
export type CreateGuardrailBody = z.input<typeof guardrailRoutes.CreateGuardrailBody>;
export type GuardrailDetector = z.input<typeof guardrailRoutes.Detector>;

export type Team = z.output<typeof teamRoutes.Team>;
export type TeamMember = z.output<typeof teamRoutes.TeamMember>;
export type TeamInvite = z.output<typeof teamRoutes.TeamInvite>;
export type TeamRole = z.output<typeof teamRoutes.TeamRole>;

export type CallCapture = z.output<typeof captureRoutes.CallCapture>;

export type Project = z.output<typeof runRoutes.Project>;
export type Run = z.output<typeof runRoutes.Run>;
export type RunEvent = z.output<typeof runRoutes.RunEvent>;
export type WebhookEndpoint = z.output<typeof runRoutes.WebhookEndpoint>;

export type XBuild = z.output<typeof xBuildRoutes.XbJobView>;
export type XBuildStats = z.output<typeof xBuildRoutes.XbStats>;
export type XBuildQueue = z.output<typeof xBuildRoutes.XbQueueView>;
export type XBuildBlock = z.output<typeof xBuildRoutes.XbBlock>;
