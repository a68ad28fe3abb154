import { setMaxListeners } from 'node:events';
import type { RequestListener } from 'node:http';
import { awaitTopic, createBus, createTopicAdmin, type Bus } from '@sbc/bus';
import type { ChatResponse } from '@sbc/dialects';
import { USAGE_EVENTS_TOPIC } from '@sbc/events';
import { createEgressPolicy, type Resolver } from '@sbc/egress';
import { createCacheAdapters, LocalCache, type PubSub, type SharedStore } from '@sbc/cache';
import { listen, type RunningHttpServer } from '@sbc/http';
import { isBundleEntry, runService } from '@sbc/lifecycle';
import { createLogger, type Logger } from '@sbc/logging';
import { AccountService, type GetRoutingTableResponse } from '@sbc/proto/sbc/account/v1/account_pb';
import { DeviceService } from '@sbc/proto/sbc/account/v1/devices_pb';
import { SessionService } from '@sbc/proto/sbc/account/v1/sessions_pb';
import { TeamService } from '@sbc/proto/sbc/account/v1/teams_pb';
import { AuditService } from '@sbc/proto/sbc/account/v1/audit_pb';
import { UpstreamService } from '@sbc/proto/sbc/account/v1/upstreams_pb';
import { GuardrailService } from '@sbc/proto/sbc/account/v1/guardrails_pb';
import { McpServerService } from '@sbc/proto/sbc/account/v1/mcp_pb';
import { BatchesService } from '@sbc/proto/sbc/runs/v1/batches_pb';
import { FilesService } from '@sbc/proto/sbc/runs/v1/files_pb';
import { ResponsesService } from '@sbc/proto/sbc/runs/v1/responses_pb';
import { RunsService } from '@sbc/proto/sbc/runs/v1/runs_pb';
import { UsageLedgerService } from '@sbc/proto/sbc/usage/v1/ledger_pb';
import { XBuildsService } from '@sbc/proto/sbc/xbuilds/v1/xbuilds_pb';
import { Counter, createMetricsRegistry, writeMetrics } from '@sbc/metrics';
import {
  memoryDeploymentLimiter,
  memoryTargetHealth,
  redisDeploymentLimiter,
  redisTargetHealth,
} from '@sbc/route-health';
import { BODY_MESSAGE_MAX_BYTES, checkHealth, createRpcClient } from '@sbc/rpc';
import { createAppsHost } from './apps-host/apps-host';
import { createAuthenticator, type Principal } from './auth/authenticator';
import { createAuthorize } from './auth/authorize';
import { withStepsOff } from './bench-steps';
import { createKeyUseRecorder } from './auth/key-use';
import { loadGatewayConfig, type GatewayConfig } from './config';
import { createBudget } from './limits/budget';
import { createRateLimiter } from './limits/rate-limit';
import { createCounterLeases } from './limits/counter-leases';
import { createFairUseViews } from './limits/fair-use';
import { createWindowLeases } from './limits/window-leases';
import { createSignInThrottle } from './limits/sign-in-throttle';
import { FULL_CALL_STEPS } from './model-calls/call-steps';
import { createModelCallHandler } from './model-calls/handle-call';
import { createSharedReplyStore, MemoryReplyStore } from './response-cache/reply-store';
import { createResponseCache } from './response-cache/response-cache';
import { createResponsesState } from './responses-state/responses-state';
import { createCountTokensHandler } from './model-calls/handle-count-tokens';
import { createPricing } from './model-calls/pricing';
import { ownCall } from './model-calls/own-call';
import { createEngineReachability } from './routing/engine-reachability';
import { simulatorHouseEngines } from './routing/engines';
import { createEdgeMetrics } from './observability/edge-metrics';
import { createGenAiTelemetry, type AttemptOutcome } from './observability/genai-telemetry';
import { createRoutingTables } from './routing/routing-tables';
import { createToolServerDirectory, type EdgeToolServer, type ToolServerDirectory } from './mcp/tool-servers';
import type { Target } from './routing/targets';
import { McpSessions } from './mcp/mcp-sessions';
import { toolCallUsage, type ToolCallRecord } from './mcp/tool-call-usage';
import { createToolGatewaySession } from './mcp/tool-gateway';
import { createCallTools } from './mcp/call-tools';
import { createUpstreamDialer } from './mcp/upstream-tools';
import { createEdgeRouter } from './edge-router';
import { createGatewayApp } from './server';
import { renderClientError } from './http/client-errors';
import { BetaRefusals, reportBetaRefusals } from './upstream/beta-refusals';
import { createUpstreamClient } from './upstream/client';
import { createCaptureHook } from './capture/call-capture';
import { createGuardrailHook } from './guardrails/guardrail-hook';
import { createGuardrailJudge } from './guardrails/guardrail-judge';
import { createGuardrailWebhooks } from './guardrails/guardrail-webhook';
import { createMemoryCaptureStore, createSharedCaptureStore } from './capture/capture-store';
import { createUsageEmitter } from './usage/usage-events';
import { createUsageGate } from './usage/usage-gate';
import { registerSpoolMetrics } from './usage/spool-metrics';
import { waitForSpoolToDrain } from './usage/spool-drain-wait';

export { loadGatewayConfig, type GatewayConfig } from './config';
export { simulatorHouseEngines, type Engine, type HouseEngines } from './routing/engines';

/** Collaborators the embedded app shares between services in one process. */
export interface GatewayOverrides {
  /** In-process pub/sub (revocations, routing changes) shared with the account service. */
  pubsub?: PubSub;
  /** The shared store for rate limits and budgets; embedded mode keeps it in memory. */
  store?: SharedStore;
  /** The usage-event bus shared with the usage ledger (in-process in embedded mode). */
  bus?: Bus;
  logger?: Logger;
  /** How callers' endpoints' names are resolved when dialed (a test points one elsewhere between two dials). */
  egressResolve?: Resolver;
}

const DEFAULT_SIM_URL = 'http://127.0.0.1:8090';
/** What the gateway calls itself as an MCP server and client. */
const MCP_GATEWAY_VERSION = '0.1.0';
const ENGINE_PROBE_INTERVAL_MS = 15_000;
const ENGINE_PROBE_TIMEOUT_MS = 2_000;
/** A playground capture is read right after its call; ten minutes leaves time to look, and no longer. */
const CAPTURE_TTL_MS = 10 * 60_000;
/** Embedded mode's captures, all accounts together: the least recently stored go first past this. */
const CAPTURE_MEMORY_MAX_BYTES = 64 * 1024 * 1024;

/** Why an edge on its own, with no broker and no explicit opt-out, does not start. */
export const NO_USAGE_SINK =
  'No usage sink: KAFKA_BROKERS is not set, so the usage events of this edge would reach no ledger and its calls ' +
  'would go unbilled. Set KAFKA_BROKERS (the ledger must consume the same cluster), or USAGE_EVENTS=off to serve ' +
  'calls without recording usage.';

export interface RunningGateway {
  /** Where the edge listens (the bound address). */
  url: string;
  /** The public base URL (`BASE_URL`). */
  baseUrl: string;
  /** The MCP tool servers each credential may use, as this edge caches them. */
  toolServers: ToolServerDirectory;
  stop(): Promise<void>;
}

export async function start(config: GatewayConfig, overrides: GatewayOverrides = {}): Promise<RunningGateway> {
  const logger = overrides.logger ?? createLogger({ service: 'gateway', level: config.logLevel });
  // An edge started alone without KAFKA_BROKERS would serve calls nobody bills: it refuses to start unless the
  // operator said USAGE_EVENTS=off, which is repeated at every start.
  if (config.usageEventsOff) logger.warn('USAGE_EVENTS=off: this edge records no usage; its calls are not billed');
  else if (!overrides.bus && !config.kafkaBrokers) throw new Error(NO_USAGE_SINK);
  const stepsOff = config.benchStepsOff;
  if (stepsOff.size > 0)
    logger.warn(
      { stepsOff: [...stepsOff] },
      `SBC_BENCH_STEPS_OFF: THIS EDGE LEAVES OUT ${[...stepsOff].join(', ')} ON MODEL CALLS, for a benchmark; ` +
        'it must never serve real traffic',
    );
  const accountRpc = { target: config.accountTarget, deadlineMs: config.rpcDeadlineMs };
  const account = createRpcClient(AccountService, accountRpc);
  // The account surface's services, served by the same account app.
  const accountSurface = {
    sessions: createRpcClient(SessionService, accountRpc),
    upstreams: createRpcClient(UpstreamService, accountRpc),
    teams: createRpcClient(TeamService, accountRpc),
    devices: createRpcClient(DeviceService, accountRpc),
    audit: createRpcClient(AuditService, accountRpc),
    guardrails: createRpcClient(GuardrailService, accountRpc),
    mcpServers: createRpcClient(McpServerService, accountRpc),
  };
  // The other backends' APIs for the REST surface; none is on a model call's path.
  const backends = {
    ledger: createRpcClient(UsageLedgerService, { target: config.usageLedgerTarget, deadlineMs: config.rpcDeadlineMs }),
    xbuilds: createRpcClient(XBuildsService, { target: config.xBuildsTarget, deadlineMs: config.rpcDeadlineMs }),
    runs: createRpcClient(RunsService, { target: config.runsTarget, deadlineMs: config.rpcDeadlineMs }),
    // Stored OpenAI Responses, read on a model call's path only when it names previous_response_id; a stored
    // response travels whole, so larger than grpc-js's default 4 MiB.
    responses: createRpcClient(ResponsesService, {
      target: config.runsTarget,
      deadlineMs: config.responses.rpcDeadlineMs,
      channelOptions: { 'grpc.max_receive_message_length': BODY_MESSAGE_MAX_BYTES },
    }),
    // Files travel a chunk (1 MiB) per message, within grpc-js's default bound.
    files: createRpcClient(FilesService, { target: config.runsTarget, deadlineMs: config.rpcDeadlineMs }),
    // A create reads the input file and queues its lines (up to 100,000 rows in one call); a message batch's
    // requests travel whole, bounded by the route's body limit, under what the runs service receives.
    batches: createRpcClient(BatchesService, { target: config.runsTarget, deadlineMs: 60_000 }),
  };
  // Redis when REDIS_URL is set, memory otherwise; the embedded app may share its own pub/sub or store.
  const cache = createCacheAdapters({ redisUrl: config.redisUrl });
  const pubsub = overrides.pubsub ?? cache.pubsub;
  const store = overrides.store ?? cache.store;
  // Usage events go to the bus the embedded app shares, or to Kafka.
  // Over Kafka, an event the broker has not acked within USAGE_SPOOL_AFTER_MS waits in the spool on disk.
  const usageEvents = config.usageEvents;
  if (!overrides.bus && config.kafkaBrokers && !config.usageEventsOff) await awaitUsageTopic(config, logger);
  const busOptions = {
    clientId: 'gateway',
    logger,
    compression: usageEvents.compression,
    topicPrefix: usageEvents.topicPrefix,
    connection: config.kafka,
    outboxDir: usageEvents.spoolDir,
    spoolAfterMs: usageEvents.spoolAfterMs,
    spool: { maxBytes: usageEvents.spoolMaxBytes, leaseMs: usageEvents.spoolLeaseMs },
  };
  const ownBus =
    !overrides.bus && config.kafkaBrokers ? createBus({ kafkaBrokers: config.kafkaBrokers, ...busOptions }) : undefined;
  const bus = config.usageEventsOff ? undefined : (overrides.bus ?? ownBus);
  const house = config.houseEngines ?? simulatorHouseEngines(DEFAULT_SIM_URL);
  // An engine nobody listens on (the simulator not started, a mistyped HOUSE_ENGINES) is logged when found,
  // shown in the readiness body and in GET /v1/models. It does not make the edge unready: every edge sees
  // the same engine, and keys on their own endpoints are still served.
  const reachability = createEngineReachability({
    house,
    intervalMs: ENGINE_PROBE_INTERVAL_MS,
    timeoutMs: ENGINE_PROBE_TIMEOUT_MS,
    onChange: (origin, reach) =>
      reach.reachable
        ? logger.info({ origin }, 'house engine reachable')
        : logger.warn({ origin, error: reach.error }, 'house engine cannot be reached: its models answer 502'),
  });
  // The edge's own origins, which no caller's endpoint may dial: BASE_URL now, the bound address once listening.
  const ownOrigins = [config.baseUrl];
  const egress = createEgressPolicy({
    privateEgress: config.egress.private,
    ownOrigins: () => ownOrigins,
    resolve: overrides.egressResolve,
  });
  const upstream = createUpstreamClient(config.upstream, egress);
  // Guardrail webhooks are dialed under the same egress rules as callers' endpoints.
  const guardrailWebhooks = createGuardrailWebhooks(egress);
  const pricing = createPricing();
  const routing = createRoutingTables({
    account,
    pubsub,
    cache: new LocalCache<GetRoutingTableResponse>({
      maxEntries: config.authCache.maxEntries,
      freshMs: config.routingCache.freshMs,
      staleMs: config.routingCache.staleMs,
      onRefreshError: (err) => logger.warn({ err }, 'refreshing a cached routing table failed'),
    }),
  });
  // The MCP tool servers each credential may use, cached and dropped on change as routing tables are.
  const toolServers = createToolServerDirectory({
    mcpServers: accountSurface.mcpServers,
    pubsub,
    cache: new LocalCache<EdgeToolServer[]>({
      maxEntries: config.authCache.maxEntries,
      freshMs: config.routingCache.freshMs,
      staleMs: config.routingCache.staleMs,
      onRefreshError: (err) => logger.warn({ err }, 'refreshing a cached tool-server table failed'),
    }),
  });

  const authenticator = createAuthenticator({
    account,
    pubsub,
    logger,
    cache: new LocalCache<Principal | null>({
      maxEntries: config.authCache.maxEntries,
      freshMs: config.authCache.freshMs,
      staleMs: config.authCache.staleMs,
      // Unknown secrets are remembered briefly so a flood of bad keys does not reach the account service.
      negativeFreshMs: 2_000,
      negativeStaleMs: 0,
      // A failed background refresh keeps serving the stale entry until its window ends; say so once per failure.
      onRefreshError: (err) => logger.warn({ err }, 'refreshing a cached credential failed'),
    }),
  });
  const keyUse = createKeyUseRecorder({ account, intervalMs: config.keyUseFlushMs, logger });

  let draining = false;
  // Aborted on SIGTERM (event streams end at once), and when the drain time is up (model streams end then).
  const drain = new AbortController();
  const drainDeadline = new AbortController();
  // Every open event stream and running model call listens: no cap (Node warns past 10 listeners).
  setMaxListeners(0, drain.signal, drainDeadline.signal);
  const authorizeDeps = { authenticator, keyUse };
  const registry = createMetricsRegistry('gateway');
  const usageEmitter = createUsageEmitter({ producer: bus?.producer, logger });
  // The routing policy's target cooldowns and provider deployments' per-minute limits: shared by every edge
  // through Redis when the edge has it (its other shared state does too), this process's own otherwise.
  const targetHealth = config.redisUrl ? await redisTargetHealth(config.redisUrl, { logger }) : memoryTargetHealth();
  const deploymentLimiter = config.redisUrl
    ? redisDeploymentLimiter(config.redisUrl, { logger })
    : memoryDeploymentLimiter();
  const producerStats = bus ? () => bus.producer.stats() : undefined;
  // A bench edge without metrics (SBC_BENCH_STEPS_OFF) leaves the upstream client's queue waits unobserved too.
  const observedUpstream = stepsOff.has('metrics') ? undefined : upstream;
  const metrics = createEdgeMetrics(
    registry,
    { producerStats, dropped: usageEmitter.dropped },
    observedUpstream,
    targetHealth,
  );
  // Near the spool's bound, billable calls are shed (503) instead of served unbilled; readiness is not touched.
  const usageGate = createUsageGate(producerStats, usageEvents.shedAt);
  if (producerStats) registerSpoolMetrics(registry, producerStats, usageGate.shed);
  const genai = createGenAiTelemetry(registry, { captureContent: config.genAiCaptureContent });
  // One request bucket per key (or per user, for sessions and device tokens) on every keyed route. On Redis a busy
  // bucket is hit from this edge's lease on it, with no round trip (docs/leased-limits.md); in memory a hit is none.
  const requestLeases = config.redisUrl ? createWindowLeases({ store, logger }) : undefined;
  const rateLimit = createRateLimiter({
    store,
    leases: requestLeases,
    limitPerMinute: config.rateLimitPerMinute,
    batchShare: config.batchRateShare,
    onRefused: () => metrics.rateLimited(),
  });
  // The playground's captures: in the shared store when it is Redis (any edge answers the read), else here.
  const captures = config.redisUrl
    ? createSharedCaptureStore(store, CAPTURE_TTL_MS)
    : createMemoryCaptureStore({ ttlMs: CAPTURE_TTL_MS, maxBytes: CAPTURE_MEMORY_MAX_BYTES });
  // On Redis a busy subject's caps and balance are reserved from this edge's leases, with no round trip.
  const budgetLeases = config.redisUrl ? createCounterLeases({ store, logger }) : undefined;
  // House-fast fair use is read through a per-user view and counted in a background flush (a bounded overshoot).
  const fairUse = config.redisUrl ? createFairUseViews({ store, logger }) : undefined;
  const budget = createBudget({ store, leases: budgetLeases, fairUse });
  const storedResponses = new Counter({
    name: 'sbc_stored_responses_total',
    help: 'Responses kept for `store: true` calls, by outcome (stored, failed: the caller had the reply, not kept).',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const responsesState = createResponsesState({
    client: backends.responses,
    logger,
    maxStoredBytes: config.responses.maxStoredBytes,
    onStored: (outcome) => storedResponses.inc({ outcome }),
  });
  // The MCP gateway: its clients to tool servers dial under the egress rules; each tools/call is a usage event,
  // refused while the edge could not record it.
  const mcpDialer = createUpstreamDialer(egress, config.mcp);
  // A tool call's usage row, at /mcp or in a model call's MCP rounds, counted in the edge's call metrics as model
  // calls are, from the same usage event.
  const recordToolCall = (call: ToolCallRecord) => {
    const fields = toolCallUsage(call);
    metrics.observeCall(fields);
    return usageEmitter.emit(fields, call.lineEventId);
  };
  const mcpSessions = new McpSessions({
    limits: { maxSessions: config.mcp.maxSessions, idleMs: config.mcp.sessionIdleMs },
    source: toolServers,
    logger,
    open: (slug) =>
      createToolGatewaySession(
        {
          source: toolServers,
          dialer: mcpDialer,
          logger,
          version: MCP_GATEWAY_VERSION,
          health: targetHealth,
          usageGate,
          record: (call) => void recordToolCall(call),
        },
        slug,
      ),
  });
  // Draining ends every MCP session (their GET streams included), as it ends other event streams.
  drain.signal.addEventListener('abort', () => void mcpSessions.closeAll(), { once: true });
  const app = createGatewayApp({
    captures,
    budget,
    rateLimitPerMinute: config.rateLimitPerMinute,
    baseUrl: config.baseUrl,
    logger,
    account,
    ...accountSurface,
    ...backends,
    authorize: createAuthorize({ ...authorizeDeps, rateLimit }),
    throttle: createSignInThrottle({ store, trustedProxyHops: config.trustedProxyHops }),
    house,
    providers: config.providerEngines,
    routing,
    toolServers,
    mcp: mcpSessions,
    reachability,
    pubsub,
    draining: drain.signal,
    // A broker outage does not make the edge unready: the spool records usage, and billable calls are shed
    // only near its bound (usage-gate.ts). Every edge sees the same outage: unready edges would be an API outage.
    ready: async () => !draining && (await checkHealth(config.accountTarget, '', 1_000)) === 'SERVING',
    readyDetail: () => {
      const unreachable = reachability.unreachable();
      return unreachable.length > 0 ? { house_engines_unreachable: unreachable } : {};
    },
  });
  // What this edge's Anthropic-dialect targets refused in anthropic-beta: counted, and logged once per value learnt.
  const betas = new BetaRefusals(reportBetaRefusals(metrics, logger));
  // The parts of a caller's model calls: the full ones, unless a benchmark switched steps off (bench-steps.ts).
  const callParts = withStepsOff(stepsOff, {
    steps: FULL_CALL_STEPS,
    metrics,
    genai,
    authorize: authorizeDeps,
    rateLimit,
    budget,
  });
  const modelCallDeps = {
    ...callParts.authorize,
    baseUrl: config.baseUrl,
    maxBodyBytes: config.maxBodyBytes,
    defaultMaxTokens: config.defaultMaxTokens,
    rateLimit: callParts.rateLimit,
    budget: callParts.budget,
    usageGate,
    routing,
    house,
    providers: config.providerEngines,
    upstream,
    betas,
    route: {
      health: targetHealth,
      limiter: deploymentLimiter,
      maxAttempts: config.route.maxAttempts,
      firstByteDeadlineMs: config.route.firstByteDeadlineMs,
      onAttempt: (target: Target, outcome: AttemptOutcome, failedStatus?: number) => {
        callParts.metrics.routeAttempt(target, outcome);
        callParts.genai.attempt(target, outcome, failedStatus);
      },
    },
    // Every model call emits exactly one usage event; its figures also feed the upstream metrics.
    usage: {
      ...usageEmitter,
      emit(fields: Parameters<typeof usageEmitter.emit>[0], lineEventId?: string) {
        callParts.metrics.observeCall(fields);
        return usageEmitter.emit(fields, lineEventId);
      },
    },
    pricing,
    // A model call's remote MCP tools run on the caller's tool servers, each call metered as a tools/call at /mcp.
    mcpTools: createCallTools({
      source: toolServers,
      dialer: mcpDialer,
      health: targetHealth,
      record: recordToolCall,
      logger,
      version: MCP_GATEWAY_VERSION,
    }),
    maxToolRounds: config.mcp.maxToolRounds,
    // The step socket's hooks, in order: the first sees the call first and its reply last.
    hooks: [
      createCaptureHook({ captures, logger }),
      // Stored Responses: a continued one is put before the call (so a cache hit below sees it whole), a kept one
      // is written with the usage record.
      responsesState,
      createGuardrailHook({
        webhooks: guardrailWebhooks,
        // A judge's question is a call of the guarded call's key, on the call path below without its hooks.
        judge: createGuardrailJudge({
          call: (own): Promise<ChatResponse> => ownCall(modelCallDeps, own),
          logger,
          maxChars: config.guardrails.judgeMaxChars,
        }),
        logger,
        registry,
      }),
      // Shared by every edge through Redis when the edge has it; a bounded LRU in this process otherwise.
      createResponseCache({
        store: config.redisUrl
          ? createSharedReplyStore(store, config.responseCache)
          : new MemoryReplyStore(config.responseCache),
        logger,
      }),
    ],
    logger,
    genai: callParts.genai,
    drainDeadline: drainDeadline.signal,
    steps: callParts.steps,
  };
  const handleModelCall = createModelCallHandler(modelCallDeps);
  const handleCountTokens = createCountTokensHandler(modelCallDeps);
  const appsHost = createAppsHost({ appsDomain: config.appsDomain, xbuilds: backends.xbuilds, pubsub });
  const scrape: RequestListener = (req, res) => void writeMetrics(registry, req, res);
  const listener = createEdgeRouter({
    baseUrl: config.baseUrl,
    logger,
    metrics: callParts.metrics,
    appsHost,
    handleModelCall,
    handleCountTokens,
    // Without a metrics port of its own, the edge answers scrapes on its main port, to this machine only.
    scrape: config.metrics.port === undefined ? scrape : undefined,
    rest: app,
  });
  // Everything the edge opened besides its listener, released on stop and on a failed start alike.
  // The bus is closed (flushed) after the drain, so calls that finished during it have their usage sent.
  const releaseClients = async () => {
    reachability.stop();
    usageGate.stop();
    await keyUse.stop();
    await authenticator.stop();
    await routing.stop();
    await mcpSessions.closeAll();
    await mcpDialer.close();
    await toolServers.stop();
    await upstream.close();
    await guardrailWebhooks.close();
    await targetHealth.close();
    await deploymentLimiter.close();
    await ownBus?.close();
    // After the drain, so calls that finished during it spent what they took; before the store closes.
    await requestLeases?.close();
    await budgetLeases?.close();
    await fairUse?.close();
    account.close();
    for (const client of Object.values(accountSurface)) client.close();
    for (const client of Object.values(backends)) client.close();
    await cache.close();
  };
  let http: RunningHttpServer;
  let metricsHttp: RunningHttpServer | undefined;
  try {
    await authenticator.start();
    await routing.start();
    await toolServers.start();
    await reachability.start();
    if (config.metrics.port !== undefined)
      metricsHttp = await listen(scrape, { host: config.metrics.host, port: config.metrics.port });
    http = await listen(listener, {
      host: config.host,
      port: config.port,
      limits: config.http,
      renderClientError: renderClientError(config.baseUrl),
    });
  } catch (error) {
    await metricsHttp?.close(0);
    await releaseClients();
    throw error;
  }
  ownOrigins.push(http.url);
  logger.info({ url: http.url, baseUrl: config.baseUrl, metrics: metricsHttp?.url }, 'gateway listening');

  let stopping: Promise<void> | undefined;
  return {
    url: http.url,
    baseUrl: config.baseUrl,
    toolServers,
    stop() {
      stopping ??= (async () => {
        draining = true;
        drain.abort();
        await http.close(config.shutdownDrainMs, { onDeadline: () => drainDeadline.abort() });
        await metricsHttp?.close(0);
        await releaseClients();
        logger.info('gateway stopped');
      })();
      return stopping;
    },
  };
}

/**
 * Waits, bounded by KAFKA_TOPIC_WAIT_MS, for usage.events.v1 as the ledger's migrate makes it. A topic missing or
 * short of its settings after the wait stops the start (the edge would serve calls it cannot bill); brokers that
 * do not answer do not (an edge restarted in a Kafka outage spools, and answers).
 */
async function awaitUsageTopic(config: GatewayConfig, logger: Logger): Promise<void> {
  const topic = config.usageEvents.topicPrefix + USAGE_EVENTS_TOPIC;
  const admin = createTopicAdmin({
    brokers: config.kafkaBrokers!,
    clientId: 'gateway-topic-check',
    logger,
    connection: config.kafka,
  });
  const outcome = await awaitTopic(admin, { topic, app: 'gateway', timeoutMs: config.usageEvents.topicWaitMs }, logger);
  if (outcome.state === 'ready') return;
  if (outcome.state === 'unreachable') {
    logger.warn({ topic, problems: outcome.problems }, 'the brokers do not answer: starting, usage events spool');
    return;
  }
  throw new Error(
    `${topic} is ${outcome.state === 'missing' ? 'missing' : 'short of its settings'} after ` +
      `${config.usageEvents.topicWaitMs} ms (${outcome.problems.join('; ')}): run the usage ledger's migrate ` +
      '(`usage-ledger migrate` with the same KAFKA_BROKERS), which makes it with its partitions, replication and ' +
      'retention.',
  );
}

if (isBundleEntry('gateway')) {
  runService({
    name: 'gateway',
    load: () => loadGatewayConfig(process.env),
    start,
    commands: {
      // The pod's preStop: waits, bounded, for this edge's spool to reach the broker (deploy/README.md).
      'spool-drain-wait': (config, args) => waitForSpoolToDrain(config, args),
    },
  });
}
