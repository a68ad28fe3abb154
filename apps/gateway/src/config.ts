import { z } from 'zod';
import {
  KAFKA_COMPRESSIONS,
  kafkaClientProblems,
  kafkaClientVars,
  toKafkaConnection,
  type KafkaCompression,
  type KafkaConnection,
} from '@sbc/bus';
import type { HttpLimits } from '@sbc/http';
import { commaList, flag, grpcTarget, hostList, logLevel, parseEnv, port, positiveInt, url } from '@sbc/config';
import { PRIVATE_EGRESS, privateEgressOf, type PrivateEgress } from '@sbc/egress';
import { houseEnginesVar, providerEnginesVar, type HouseEngines, type ProviderEngines } from './routing/engines';
import { USAGE_DURABLE_WAIT_MS } from './usage/usage-events';

/**
 * The model-call steps a bench may switch off (SBC_BENCH_STEPS_OFF), each measured by an edge without it
 * (bench/gateway.mjs's step table; what each removes: bench-steps.ts).
 */
const BENCH_STEPS = ['metrics', 'record', 'admit', 'scans'] as const;
export type BenchStep = (typeof BENCH_STEPS)[number];

const isBenchStep = (name: string): name is BenchStep => (BENCH_STEPS as readonly string[]).includes(name);

/** A comma-separated list of bench steps; an unknown name is refused, naming the known ones. */
const benchStepList = commaList
  .superRefine((names, ctx) => {
    for (const name of names.filter((each) => !isBenchStep(each)))
      ctx.addIssue({ code: 'custom', message: `"${name}" is no step; the steps are ${BENCH_STEPS.join(', ')}` });
  })
  .transform((names) => new Set(names.filter(isBenchStep)) as ReadonlySet<BenchStep>);

const schema = z
  .object({
    PORT: port(8080),
    HOST: z.string().default('127.0.0.1'),
    BASE_URL: url(['http', 'https']).optional(),
    APPS_DOMAIN: z.string().default('apps.localhost'),
    ACCOUNT_GRPC_TARGET: grpcTarget.default('127.0.0.1:50051'),
    USAGE_LEDGER_GRPC_TARGET: grpcTarget.default('127.0.0.1:50052'),
    X_BUILDS_GRPC_TARGET: grpcTarget.default('127.0.0.1:50053'),
    RUNS_GRPC_TARGET: grpcTarget.default('127.0.0.1:50054'),
    REDIS_URL: url(['redis', 'rediss']).optional(),
    RPC_DEADLINE_MS: positiveInt(2_000),
    AUTH_CACHE_FRESH_MS: positiveInt(10_000),
    AUTH_CACHE_STALE_MS: positiveInt(60_000),
    AUTH_CACHE_MAX_ENTRIES: positiveInt(100_000),
    KEY_USE_FLUSH_MS: positiveInt(30_000),
    /** Model-call bodies (prompts with images and long histories). */
    MAX_BODY_BYTES: positiveInt(32 * 1024 * 1024),
    /** A caller's request headers must arrive within this long, else 408. */
    HTTP_HEADERS_TIMEOUT_MS: positiveInt(10_000),
    /**
     * A caller's whole request, body included, must arrive within this long, else 408; the answer (a stream too) may
     * take longer.
     */
    HTTP_REQUEST_TIMEOUT_MS: positiveInt(60_000),
    /** An idle kept-alive caller socket is closed after this long; longer than common load balancers' idle timeouts. */
    HTTP_KEEP_ALIVE_TIMEOUT_MS: positiveInt(65_000),
    /** Request line and headers together; beyond it 431. */
    HTTP_MAX_HEADER_BYTES: positiveInt(16 * 1024),
    SHUTDOWN_DRAIN_MS: positiveInt(10_000),
    LOG_LEVEL: logLevel,
    /** Per house model, the ordered engines that serve it (JSON); the embedded app defaults it to its simulator. */
    HOUSE_ENGINES: houseEnginesVar.optional(),
    /** Per vendor, the service-held endpoint that serves catalog models on credits (JSON). */
    PROVIDER_ENGINES: providerEnginesVar.optional(),
    KAFKA_BROKERS: hostList.optional(),
    /**
     * `off`: this edge records no usage (its calls go unbilled), said at every start. Without it, an edge started
     * on its own needs KAFKA_BROKERS and refuses to start otherwise.
     */
    USAGE_EVENTS: z.enum(['on', 'off']).default('on'),
    /** Put before every topic name (`staging.` makes `staging.usage.events.v1`); the ledger must use the same. */
    KAFKA_TOPIC_PREFIX: z.string().default(''),
    /** Producer compression of usage events: lz4 (cheap on CPU for small, frequent batches), gzip or none. */
    KAFKA_COMPRESSION: z.enum(KAFKA_COMPRESSIONS).default('lz4'),
    ...kafkaClientVars,
    /**
     * With KAFKA_BROKERS: the spool's root, where usage events the broker has not acked wait on disk. Edges may share
     * it (a ReadWriteMany volume): each spools into a directory of its own and adopts those of edges that are gone.
     */
    USAGE_SPOOL_DIR: z.string().default('.data/usage-spool'),
    /** How long a usage event waits for the broker's ack before it is spooled (a reply's end waits this at most). */
    USAGE_SPOOL_AFTER_MS: positiveInt(500),
    /** Most bytes of this edge's own spool on disk; past it spooled appends are refused. */
    USAGE_SPOOL_MAX_BYTES: positiveInt(1024 * 1024 * 1024),
    /**
     * While events spool, calls that would be billed are answered 503 once the spool holds this share of its bytes
     * (percent), so the calls still running have room to record theirs.
     */
    USAGE_SPOOL_SHED_AT_PERCENT: z.coerce.number().int().min(1).max(100).default(90),
    /** A spool directory whose lease has not changed this long belongs to an edge that is gone, and is adopted. */
    USAGE_SPOOL_LEASE_MS: z.coerce.number().int().min(1_000).default(30_000),
    /** At start, how long the edge waits for usage.events.v1 to exist as the ledger's migrate makes it. */
    KAFKA_TOPIC_WAIT_MS: z.coerce.number().int().min(0).default(60_000),
    UPSTREAM_CONNECT_TIMEOUT_MS: positiveInt(5_000),
    /** How long an upstream may take to send its response headers (first byte) before the next engine is tried. */
    UPSTREAM_HEADERS_TIMEOUT_MS: positiveInt(120_000),
    /** Longest silence inside an upstream body (between chunks). */
    UPSTREAM_BODY_TIMEOUT_MS: positiveInt(300_000),
    /** Idle keep-alive sockets to an upstream are closed after this long. */
    UPSTREAM_IDLE_TIMEOUT_MS: positiveInt(30_000),
    /**
     * HTTP/1.1 connections per upstream origin: a streamed reply holds one for its whole length, so this is
     * how many calls to one origin stream at once (an HTTP/2 connection, negotiated when the upstream offers
     * it, carries 100). Sized for what one edge process holds (about 10,000 streams).
     */
    UPSTREAM_CONNECTIONS_PER_ORIGIN: positiveInt(10_000),
    /**
     * Calls per origin that may wait for a connection when all are busy; past it a call is answered overloaded at once.
     */
    UPSTREAM_QUEUE_LIMIT: positiveInt(1_000),
    /** Output cap sent to Anthropic upstreams when the caller named none (their API requires one). */
    DEFAULT_MAX_TOKENS: positiveInt(4_096),
    RATE_LIMIT_PER_MINUTE: positiveInt(1_200),
    /**
     * The part of the creating key's request and token limits a batch's lines may take, counting the key's other
     * calls in them (docs/batches.md "Pacing"): above 0, at most 1.
     */
    BATCHES_RATE_SHARE: z.coerce.number().gt(0).max(1).default(0.5),
    /**
     * Proxies in front of the edge that append the caller's address to `x-forwarded-for` (an ingress, a load
     * balancer): the sign-in and sign-up throttles count per caller address, taken that many hops from the end.
     * 0 (default) uses the socket's peer and ignores the header, which a caller could forge.
     */
    TRUSTED_PROXY_HOPS: z.coerce.number().int().min(0).max(10).default(0),
    /**
     * A separate listener for Prometheus scrapes (e.g. 9100 in a cluster); unset serves /metrics on PORT to loopback
     * callers only.
     */
    METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
    METRICS_HOST: z.string().default('127.0.0.1'),
    /** Upstream attempts one model call may make across its targets and fallback models (CONTRACTS Routing policy). */
    ROUTE_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(4),
    /**
     * How long a call may go on trying targets before its first byte reaches the caller: no further attempt or
     * retry starts after it (the attempt under way still has UPSTREAM_HEADERS_TIMEOUT_MS).
     */
    ROUTE_FIRST_BYTE_DEADLINE_MS: positiveInt(120_000),
    ROUTING_CACHE_FRESH_MS: positiveInt(30_000),
    ROUTING_CACHE_STALE_MS: positiveInt(300_000),
    /**
     * The response cache's memory when embedded (no REDIS_URL): bytes of cached replies one edge holds, the least
     * recently used dropped first. With Redis, Redis's own `maxmemory` bounds it (docs/model-calls.md).
     */
    RESPONSE_CACHE_MAX_BYTES: positiveInt(64 * 1024 * 1024),
    /** The largest reply the response cache keeps, in bytes (larger replies are served but not cached). */
    RESPONSE_CACHE_MAX_ENTRY_BYTES: positiveInt(1024 * 1024),
    /**
     * The largest stored OpenAI Response, in bytes of JSON (its object and its context: the continued response's
     * items and the call's input). A `store: true` call whose context is larger is refused (400) before any upstream
     * is called; at most 64 MiB, what one message to the runs service carries.
     */
    RESPONSES_MAX_STORED_BYTES: z.coerce
      .number()
      .int()
      .min(1)
      .max(64 * 1024 * 1024)
      .default(64 * 1024 * 1024),
    /** Deadline of reading a stored Response (previous_response_id) and of storing one (a reply’s end waits for it). */
    RESPONSES_RPC_DEADLINE_MS: positiveInt(5_000),
    /** Who may dial custom endpoints on loopback and private addresses (CONTRACTS Egress). */
    EGRESS_PRIVATE: z.enum(PRIVATE_EGRESS).optional(),
    /** Deprecated: `true` reads as EGRESS_PRIVATE=none. */
    EGRESS_DENY_PRIVATE: flag(false),
    /**
     * Record prompts and completions on model calls' spans (`gen_ai.input.messages`, `gen_ai.output.messages`),
     * with recognisable secrets redacted. Off by default: traces then carry counts and names, never content.
     */
    OTEL_GENAI_CAPTURE_CONTENT: flag(false),
    /** The MCP gateway's open sessions on one edge (`/mcp`, `/mcp/{slug}`); past it, the least recently used ends. */
    MCP_MAX_SESSIONS: positiveInt(1_000),
    /** An MCP session with no request open for this long is ended (the client starts a new one). */
    MCP_SESSION_IDLE_MS: positiveInt(10 * 60_000),
    /** Connecting to a tool server and listing its tools, each: past it, the server is left out or the call fails. */
    MCP_CONNECT_TIMEOUT_MS: positiveInt(10_000),
    /**
     * A tool call's silence before it ends as an MCP error result; the server's progress restarts it, up to ten
     * times this in all.
     */
    MCP_CALL_TIMEOUT_MS: positiveInt(60_000),
    /**
     * The most model calls one request makes while the gateway runs the remote MCP tools it names (a Responses
     * `mcp` tool, Messages `mcp_servers`): past it, the last reply is the answer and its tool calls are not run.
     */
    MCP_MAX_TOOL_ROUNDS: z.coerce.number().int().min(1).max(64).default(8),
    /**
     * The longest message a judge guardrail is sent (its question and the call's texts), in characters; a longer
     * call is not put to the judge, and the guardrail's `fail` decides it (docs/guardrails.md). The floor leaves
     * room for a question of the most characters a guardrail may hold.
     */
    GUARDRAIL_JUDGE_MAX_CHARS: z.coerce.number().int().min(4_000).max(1_000_000).default(32_000),
    /**
     * Bench only, never in production: model-call steps this edge leaves out (BENCH_STEPS), so bench/gateway.mjs
     * measures what each costs. Taken only with USAGE_EVENTS=off, and said loudly at every start.
     */
    SBC_BENCH_STEPS_OFF: benchStepList.optional(),
  })
  .refine((vars) => vars.HTTP_HEADERS_TIMEOUT_MS <= vars.HTTP_REQUEST_TIMEOUT_MS, {
    path: ['HTTP_HEADERS_TIMEOUT_MS'],
    message: 'must not be longer than HTTP_REQUEST_TIMEOUT_MS',
  })
  .refine((vars) => vars.RESPONSE_CACHE_MAX_ENTRY_BYTES <= vars.RESPONSE_CACHE_MAX_BYTES, {
    path: ['RESPONSE_CACHE_MAX_ENTRY_BYTES'],
    message: 'must not be larger than RESPONSE_CACHE_MAX_BYTES',
  })
  .refine((vars) => !(vars.USAGE_EVENTS === 'off' && vars.KAFKA_BROKERS), {
    path: ['USAGE_EVENTS'],
    message: 'is off while KAFKA_BROKERS is set: unset one of them',
  })
  .refine((vars) => vars.SBC_BENCH_STEPS_OFF === undefined || vars.USAGE_EVENTS === 'off', {
    // An edge without some of its steps must never bill: the switch is the bench's, whose edges record no usage.
    path: ['SBC_BENCH_STEPS_OFF'],
    message: 'is for benchmarks only and needs USAGE_EVENTS=off (an edge missing steps must not serve billed calls)',
  })
  .superRefine((vars, ctx) => {
    for (const { path, message } of kafkaClientProblems(vars)) ctx.addIssue({ code: 'custom', path: [path], message });
  })
  .refine((vars) => vars.USAGE_SPOOL_AFTER_MS < USAGE_DURABLE_WAIT_MS, {
    // A reply's end stops waiting for its usage event after USAGE_DURABLE_WAIT_MS: the spool must come first.
    path: ['USAGE_SPOOL_AFTER_MS'],
    message: `must be shorter than ${USAGE_DURABLE_WAIT_MS} ms, the longest a reply's end waits for its usage event`,
  });

export interface GatewayConfig {
  host: string;
  port: number;
  /** What `doc_url` and printed URLs use; defaults to http://localhost:<PORT>. */
  baseUrl: string;
  appsDomain: string;
  accountTarget: string;
  usageLedgerTarget: string;
  xBuildsTarget: string;
  runsTarget: string;
  redisUrl?: string;
  rpcDeadlineMs: number;
  authCache: { freshMs: number; staleMs: number; maxEntries: number };
  keyUseFlushMs: number;
  /** Model-call bodies. */
  maxBodyBytes: number;
  /** Caller connections: header, request and keep-alive idle times, header size. */
  http: HttpLimits;
  shutdownDrainMs: number;
  logLevel: string;
  /** Absent means the simulator at its default address (`http://127.0.0.1:8090`). */
  houseEngines?: HouseEngines;
  providerEngines: ProviderEngines;
  kafkaBrokers?: string[];
  /** TLS and SASL to the brokers (KAFKA_TLS*, KAFKA_SASL_*). */
  kafka: KafkaConnection;
  /** USAGE_EVENTS=off: the operator chose to record no usage; otherwise an edge on its own needs a broker. */
  usageEventsOff: boolean;
  /** Usage events over Kafka: compression, the topic, the spool and when billable calls are shed. */
  usageEvents: {
    compression: KafkaCompression;
    topicPrefix: string;
    topicWaitMs: number;
    spoolDir: string;
    spoolAfterMs: number;
    spoolMaxBytes: number;
    /** A share (0–1) of spoolMaxBytes. */
    shedAt: number;
    spoolLeaseMs: number;
  };
  upstream: {
    connectTimeoutMs: number;
    headersTimeoutMs: number;
    bodyTimeoutMs: number;
    idleTimeoutMs: number;
    connectionsPerOrigin: number;
    queueLimit: number;
  };
  defaultMaxTokens: number;
  rateLimitPerMinute: number;
  /** BATCHES_RATE_SHARE: what a batch's lines may take of their creating key's limits. */
  batchRateShare: number;
  /** Proxies whose `x-forwarded-for` entries are trusted (see TRUSTED_PROXY_HOPS). */
  trustedProxyHops: number;
  metrics: { host: string; port?: number };
  routingCache: { freshMs: number; staleMs: number };
  /** The response cache's bounds: all entries in memory (embedded), and one entry (both modes). */
  responseCache: { maxBytes: number; maxEntryBytes: number };
  /** The routing policy's bounds on one call's attempts. */
  route: { maxAttempts: number; firstByteDeadlineMs: number };
  /** Stored OpenAI Responses: the largest one kept, and the deadline of their reads and writes (runs service). */
  responses: { maxStoredBytes: number; rpcDeadlineMs: number };
  /** Callers' own endpoints only; the configured engines are the operator's and dialed as configured. */
  egress: { private: PrivateEgress };
  /** OTEL_GENAI_CAPTURE_CONTENT: prompts and completions (redacted) on model calls' spans. */
  genAiCaptureContent: boolean;
  /** The MCP gateway: its sessions' bounds and its tool servers' time limits. */
  mcp: {
    maxSessions: number;
    sessionIdleMs: number;
    connectTimeoutMs: number;
    callTimeoutMs: number;
    maxToolRounds: number;
  };
  /** GUARDRAIL_JUDGE_MAX_CHARS: the longest message a judge guardrail is sent. */
  guardrails: { judgeMaxChars: number };
  /** SBC_BENCH_STEPS_OFF: the model-call steps left out, for benchmarks only; empty in every real edge. */
  benchStepsOff: ReadonlySet<BenchStep>;
}

export function loadGatewayConfig(env: Record<string, string | undefined>): GatewayConfig {
  const vars = parseEnv('gateway', schema, env);
  return {
    host: vars.HOST,
    port: vars.PORT,
    baseUrl: (vars.BASE_URL ?? `http://localhost:${vars.PORT}`).replace(/\/+$/, ''),
    appsDomain: vars.APPS_DOMAIN,
    accountTarget: vars.ACCOUNT_GRPC_TARGET,
    usageLedgerTarget: vars.USAGE_LEDGER_GRPC_TARGET,
    xBuildsTarget: vars.X_BUILDS_GRPC_TARGET,
    runsTarget: vars.RUNS_GRPC_TARGET,
    redisUrl: vars.REDIS_URL,
    rpcDeadlineMs: vars.RPC_DEADLINE_MS,
    authCache: {
      freshMs: vars.AUTH_CACHE_FRESH_MS,
      staleMs: vars.AUTH_CACHE_STALE_MS,
      maxEntries: vars.AUTH_CACHE_MAX_ENTRIES,
    },
    keyUseFlushMs: vars.KEY_USE_FLUSH_MS,
    maxBodyBytes: vars.MAX_BODY_BYTES,
    http: {
      headersTimeoutMs: vars.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: vars.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: vars.HTTP_KEEP_ALIVE_TIMEOUT_MS,
      maxHeaderBytes: vars.HTTP_MAX_HEADER_BYTES,
    },
    shutdownDrainMs: vars.SHUTDOWN_DRAIN_MS,
    logLevel: vars.LOG_LEVEL,
    houseEngines: vars.HOUSE_ENGINES,
    providerEngines: vars.PROVIDER_ENGINES ?? {},
    kafkaBrokers: vars.KAFKA_BROKERS,
    kafka: toKafkaConnection(vars),
    usageEventsOff: vars.USAGE_EVENTS === 'off',
    usageEvents: {
      compression: vars.KAFKA_COMPRESSION,
      topicPrefix: vars.KAFKA_TOPIC_PREFIX,
      topicWaitMs: vars.KAFKA_TOPIC_WAIT_MS,
      spoolDir: vars.USAGE_SPOOL_DIR,
      spoolAfterMs: vars.USAGE_SPOOL_AFTER_MS,
      spoolMaxBytes: vars.USAGE_SPOOL_MAX_BYTES,
      shedAt: vars.USAGE_SPOOL_SHED_AT_PERCENT / 100,
      spoolLeaseMs: vars.USAGE_SPOOL_LEASE_MS,
    },
    upstream: {
      connectTimeoutMs: vars.UPSTREAM_CONNECT_TIMEOUT_MS,
      headersTimeoutMs: vars.UPSTREAM_HEADERS_TIMEOUT_MS,
      bodyTimeoutMs: vars.UPSTREAM_BODY_TIMEOUT_MS,
      idleTimeoutMs: vars.UPSTREAM_IDLE_TIMEOUT_MS,
      connectionsPerOrigin: vars.UPSTREAM_CONNECTIONS_PER_ORIGIN,
      queueLimit: vars.UPSTREAM_QUEUE_LIMIT,
    },
    defaultMaxTokens: vars.DEFAULT_MAX_TOKENS,
    rateLimitPerMinute: vars.RATE_LIMIT_PER_MINUTE,
    batchRateShare: vars.BATCHES_RATE_SHARE,
    trustedProxyHops: vars.TRUSTED_PROXY_HOPS,
    metrics: { host: vars.METRICS_HOST, port: vars.METRICS_PORT },
    routingCache: { freshMs: vars.ROUTING_CACHE_FRESH_MS, staleMs: vars.ROUTING_CACHE_STALE_MS },
    responseCache: { maxBytes: vars.RESPONSE_CACHE_MAX_BYTES, maxEntryBytes: vars.RESPONSE_CACHE_MAX_ENTRY_BYTES },
    route: { maxAttempts: vars.ROUTE_MAX_ATTEMPTS, firstByteDeadlineMs: vars.ROUTE_FIRST_BYTE_DEADLINE_MS },
    responses: { maxStoredBytes: vars.RESPONSES_MAX_STORED_BYTES, rpcDeadlineMs: vars.RESPONSES_RPC_DEADLINE_MS },
    egress: { private: privateEgressOf(vars.EGRESS_PRIVATE, vars.EGRESS_DENY_PRIVATE) },
    genAiCaptureContent: vars.OTEL_GENAI_CAPTURE_CONTENT,
    mcp: {
      maxSessions: vars.MCP_MAX_SESSIONS,
      sessionIdleMs: vars.MCP_SESSION_IDLE_MS,
      connectTimeoutMs: vars.MCP_CONNECT_TIMEOUT_MS,
      callTimeoutMs: vars.MCP_CALL_TIMEOUT_MS,
      maxToolRounds: vars.MCP_MAX_TOOL_ROUNDS,
    },
    guardrails: { judgeMaxChars: vars.GUARDRAIL_JUDGE_MAX_CHARS },
    benchStepsOff: vars.SBC_BENCH_STEPS_OFF ?? new Set(),
  };
}
