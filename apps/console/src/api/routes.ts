// Every API route the console calls, each checked against its libs/api spec (method, path, inputs, answer).
import type {
  auditRoutes,
  authRoutes,
  batchRoutes,
  captureRoutes,
  deviceRoutes,
  fileRoutes,
  gatewayRoutes,
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
import { route } from './route';

export const getConsoleSession = route<typeof authRoutes.getConsoleSession>('get', '/v1/auth/console/session');
export const createConsoleSession = route<typeof authRoutes.createConsoleSession>('post', '/v1/auth/console/session');
export const signUp = route<typeof authRoutes.signUp>('post', '/v1/auth/signup');
export const endCurrentSession = route<typeof authRoutes.endCurrentSession>('delete', '/v1/auth/sessions/current');

export const listKeys = route<typeof keyRoutes.listKeys>('get', '/v1/keys');
export const createKey = route<typeof keyRoutes.createKey>('post', '/v1/keys');
export const updateKey = route<typeof keyRoutes.updateKey>('patch', '/v1/keys/{id}');
export const revokeKey = route<typeof keyRoutes.revokeKey>('delete', '/v1/keys/{id}');

// The API calls a custom endpoint an "upstream" (the provider account a call is sent on to); people adding
// one know it as an endpoint, so the console says endpoint everywhere and only these names keep the API's.
export const listGuardrails = route<typeof guardrailRoutes.listGuardrails>('get', '/v1/guardrails');
export const createGuardrail = route<typeof guardrailRoutes.createGuardrail>('post', '/v1/guardrails');
export const deleteGuardrail = route<typeof guardrailRoutes.deleteGuardrail>('delete', '/v1/guardrails/{id}');
export const testGuardrail = route<typeof guardrailRoutes.testGuardrail>('post', '/v1/guardrails/{id}/test');

export const listEndpoints = route<typeof upstreamRoutes.listUpstreams>('get', '/v1/upstreams');
export const addEndpoint = route<typeof upstreamRoutes.createUpstream>('post', '/v1/upstreams');
export const editEndpoint = route<typeof upstreamRoutes.updateUpstream>('patch', '/v1/upstreams/{slug}');
export const deleteEndpoint = route<typeof upstreamRoutes.deleteUpstream>('delete', '/v1/upstreams/{slug}');
export const probeEndpoint = route<typeof upstreamRoutes.probeUpstream>('post', '/v1/upstreams/{slug}/probe');

export const listToolServers = route<typeof mcpServerRoutes.listMcpServers>('get', '/v1/mcp/servers');
export const listTeamToolServers = route<typeof mcpServerRoutes.listTeamMcpServers>(
  'get',
  '/v1/teams/{team_id}/mcp/servers',
);
export const addToolServer = route<typeof mcpServerRoutes.createMcpServer>('post', '/v1/mcp/servers');
export const deleteToolServer = route<typeof mcpServerRoutes.deleteMcpServer>('delete', '/v1/mcp/servers/{slug}');
export const probeToolServer = route<typeof mcpServerRoutes.probeMcpServer>('post', '/v1/mcp/servers/{slug}/probe');

// Batches in OpenAI's shapes: their refusals come in OpenAI's error body, which `call` reads as any other.
export const listFiles = route<typeof fileRoutes.listFiles>('get', '/v1/files');
export const getFile = route<typeof fileRoutes.getFile>('get', '/v1/files/{file_id}');
/** Sent by `upload` (multipart), not by `call`. */
export const uploadFile = route<typeof fileRoutes.createFile>('post', '/v1/files');
/** Read by <a download>, not by `call`: the answer is the file's bytes. */
export const getFileContent = route<typeof fileRoutes.getFileContent>('get', '/v1/files/{file_id}/content');
export const listBatches = route<typeof batchRoutes.listBatches>('get', '/v1/batches');
export const createBatch = route<typeof batchRoutes.createBatch>('post', '/v1/batches');
export const cancelBatch = route<typeof batchRoutes.cancelBatch>('post', '/v1/batches/{batch_id}/cancel');

// Message batches in Anthropic's shapes: their refusals come in Anthropic's error body, which `call` reads too.
export const listMessageBatches = route<typeof messageBatchRoutes.listMessageBatches>('get', '/v1/messages/batches');
export const createMessageBatch = route<typeof messageBatchRoutes.createMessageBatch>('post', '/v1/messages/batches');
export const getMessageBatch = route<typeof messageBatchRoutes.getMessageBatch>(
  'get',
  '/v1/messages/batches/{message_batch_id}',
);
export const cancelMessageBatch = route<typeof messageBatchRoutes.cancelMessageBatch>(
  'post',
  '/v1/messages/batches/{message_batch_id}/cancel',
);
/** Read by <a download>, not by `call`: the answer is JSONL. */
export const getMessageBatchResults = route<typeof messageBatchRoutes.getMessageBatchResults>(
  'get',
  '/v1/messages/batches/{message_batch_id}/results',
);
export const deleteMessageBatch = route<typeof messageBatchRoutes.deleteMessageBatch>(
  'delete',
  '/v1/messages/batches/{message_batch_id}',
);

export const listAliases = route<typeof upstreamRoutes.listAliases>('get', '/v1/aliases');
export const putAlias = route<typeof upstreamRoutes.putAlias>('put', '/v1/aliases/{token}');
export const deleteAlias = route<typeof upstreamRoutes.deleteAlias>('delete', '/v1/aliases/{token}');

export const getUsageReport = route<typeof usageRoutes.getUsageReport>('get', '/v1/usage/report');
export const getUsageBreakdown = route<typeof usageRoutes.getUsageBreakdown>('get', '/v1/usage/breakdown');
export const listUsageRequests = route<typeof usageRoutes.listUsageRequests>('get', '/v1/usage/requests');
export const getCredits = route<typeof usageRoutes.getCredits>('get', '/v1/credits');
export const getSpend = route<typeof usageRoutes.getSpend>('get', '/v1/spend');

export const approveDevicePairing = route<typeof deviceRoutes.approveDevicePairing>('post', '/v1/devices/pair/approve');
export const denyDevicePairing = route<typeof deviceRoutes.denyDevicePairing>('post', '/v1/devices/pair/deny');
export const listDevices = route<typeof deviceRoutes.listDevices>('get', '/v1/devices');
export const renameDevice = route<typeof deviceRoutes.renameDevice>('patch', '/v1/devices/{device_id}');
export const unlinkDevice = route<typeof deviceRoutes.unlinkDevice>('delete', '/v1/devices/{device_id}');

export const listAuditEvents = route<typeof auditRoutes.listAuditEvents>('get', '/v1/audit');

export const listTeams = route<typeof teamRoutes.listTeams>('get', '/v1/teams');
export const createTeam = route<typeof teamRoutes.createTeam>('post', '/v1/teams');
export const getTeam = route<typeof teamRoutes.getTeam>('get', '/v1/teams/{team_id}');
export const updateTeam = route<typeof teamRoutes.updateTeam>('patch', '/v1/teams/{team_id}');
export const listTeamMembers = route<typeof teamRoutes.listTeamMembers>('get', '/v1/teams/{team_id}/members');
export const updateTeamMember = route<typeof teamRoutes.updateTeamMember>(
  'patch',
  '/v1/teams/{team_id}/members/{user_id}',
);
export const removeTeamMember = route<typeof teamRoutes.removeTeamMember>(
  'delete',
  '/v1/teams/{team_id}/members/{user_id}',
);
export const listTeamInvites = route<typeof teamRoutes.listTeamInvites>('get', '/v1/teams/{team_id}/invites');
export const createTeamInvite = route<typeof teamRoutes.createTeamInvite>('post', '/v1/teams/{team_id}/invites');
export const revokeTeamInvite = route<typeof teamRoutes.revokeTeamInvite>(
  'delete',
  '/v1/teams/{team_id}/invites/{code}',
);
export const resendTeamInvite = route<typeof teamRoutes.resendTeamInvite>(
  'post',
  '/v1/teams/{team_id}/invites/{code}/resend',
);
export const acceptTeamInvite = route<typeof teamRoutes.acceptTeamInvite>('post', '/v1/team_invites/{code}/accept');

export const listProjects = route<typeof runRoutes.listProjects>('get', '/v1/projects');
export const createProject = route<typeof runRoutes.createProject>('post', '/v1/projects');
export const listProjectFiles = route<typeof runRoutes.listProjectFiles>('get', '/v1/projects/{project_id}/files');
export const getProjectFile = route<typeof runRoutes.getProjectFile>('get', '/v1/projects/{project_id}/files/content');
export const listRuns = route<typeof runRoutes.listRuns>('get', '/v1/runs');
export const getRun = route<typeof runRoutes.getRun>('get', '/v1/runs/{run_id}');
export const createRun = route<typeof runRoutes.createRun>('post', '/v1/runs');
export const cancelRun = route<typeof runRoutes.cancelRun>('post', '/v1/runs/{run_id}/cancel');
/** Read by EventSource, not by `call`: the route's answer is a text/event-stream. */
export const runEvents = route<typeof runRoutes.runEvents>('get', '/v1/runs/{run_id}/events');
export const listWebhooks = route<typeof runRoutes.listWebhooks>('get', '/v1/webhooks');
export const createWebhook = route<typeof runRoutes.createWebhook>('post', '/v1/webhooks');
export const deleteWebhook = route<typeof runRoutes.deleteWebhook>('delete', '/v1/webhooks/{webhook_id}');
export const listWebhookDeliveries = route<typeof runRoutes.listWebhookDeliveries>(
  'get',
  '/v1/webhooks/{webhook_id}/deliveries',
);
export const resendWebhookDelivery = route<typeof runRoutes.resendWebhookDelivery>(
  'post',
  '/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/resend',
);

export const listXBuilds = route<typeof xBuildRoutes.listXBuilds>('get', '/v1/x-builds');
export const createXBuild = route<typeof xBuildRoutes.createXBuild>('post', '/v1/x-builds');
export const getXBuildStats = route<typeof xBuildRoutes.getXBuildStats>('get', '/v1/x-builds/stats');
export const getXBuildQueue = route<typeof xBuildRoutes.getXBuildQueue>('get', '/v1/x-builds/queue');
export const updateXBuildQueue = route<typeof xBuildRoutes.updateXBuildQueue>('patch', '/v1/x-builds/queue');
export const listXBuildBlocks = route<typeof xBuildRoutes.listXBuildBlocks>('get', '/v1/x-builds/blocklist');
export const blockXBuildAuthor = route<typeof xBuildRoutes.blockXBuildAuthor>(
  'put',
  '/v1/x-builds/blocklist/{author_id}',
);
export const unblockXBuildAuthor = route<typeof xBuildRoutes.unblockXBuildAuthor>(
  'delete',
  '/v1/x-builds/blocklist/{author_id}',
);
export const getXBuild = route<typeof xBuildRoutes.getXBuild>('get', '/v1/x-builds/{id}');
/** Read by <img> and <video>, not by `call`: the answers are media. */
export const getXBuildScreenshot = route<typeof xBuildRoutes.getXBuildScreenshot>(
  'get',
  '/v1/x-builds/{id}/screenshot',
);
export const getXBuildClip = route<typeof xBuildRoutes.getXBuildClip>('get', '/v1/x-builds/{id}/clip');
export const cancelXBuild = route<typeof xBuildRoutes.cancelXBuild>('post', '/v1/x-builds/{id}/cancel');
export const redraftXBuildReply = route<typeof xBuildRoutes.redraftXBuildReply>(
  'post',
  '/v1/x-builds/{id}/reply-draft',
);
export const moveXBuild = route<typeof xBuildRoutes.moveXBuild>('post', '/v1/x-builds/{id}/move');
export const requeueXBuild = route<typeof xBuildRoutes.requeueXBuild>('post', '/v1/x-builds/{id}/requeue');
export const resumeXBuild = route<typeof xBuildRoutes.resumeXBuild>('post', '/v1/x-builds/{id}/resume');
export const pinXBuild = route<typeof xBuildRoutes.pinXBuild>('post', '/v1/x-builds/{id}/pin');
export const unpinXBuild = route<typeof xBuildRoutes.unpinXBuild>('post', '/v1/x-builds/{id}/unpin');
export const takeDownXBuild = route<typeof xBuildRoutes.takeDownXBuild>('delete', '/v1/x-builds/{id}/publish');

// The playground's calls: the three model routes (sent by api/model-call.ts, which streams), the models the
// session can name, and a call's upstream side.
export const listModels = route<typeof gatewayRoutes.listModels>('get', '/v1/models');
export const createChatCompletion = route<typeof gatewayRoutes.createChatCompletion>('post', '/v1/chat/completions');
export const createResponse = route<typeof gatewayRoutes.createResponse>('post', '/v1/responses');
export const createMessage = route<typeof gatewayRoutes.createMessage>('post', '/v1/messages');
export const getCallCapture = route<typeof captureRoutes.getCallCapture>(
  'get',
  '/v1/usage/requests/{request_id}/capture',
);
