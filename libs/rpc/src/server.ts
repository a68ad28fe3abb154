import * as grpc from '@grpc/grpc-js';
import { create, type DescMethod, type DescService, type Message, type MessageInitShape } from '@bufbuild/protobuf';
import type { GenService, GenServiceMethods } from '@bufbuild/protobuf/codegenv2';
import { ApiError } from '@sbc/errors';
import type { Logger } from '@sbc/logging';
import { extractContext, inSpan, SpanKind, tracingEnabled } from '@sbc/telemetry';
import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from '@sbc/proto/grpc/health/v1/health_pb';
import { actorOfMetadata } from './actor';
import { toServerStatus, type ServerStatusError } from './error-status';
import { createHealthImpl, HealthBoard } from './health-service';
import { methodDefinition, methodPath, supportedMethods } from './method-definition';
import type { RpcContext, ServerStreamingHandler, ServiceImpl, UnaryHandler } from './types';

export interface RpcServerOptions {
  logger: Logger;
  /** Defaults to plaintext: calls stay inside the cluster (or the embedded process). */
  credentials?: grpc.ServerCredentials;
  /** grpc-js server options, applied over ours. */
  serverOptions?: grpc.ServerOptions;
}

export interface RpcServer {
  /** Binds a generated service to its handlers and reports it SERVING. Call before `listen`. */
  add<S extends GenServiceMethods>(service: GenService<S>, impl: ServiceImpl<S>): void;
  /** Binds `host:port` (port 0 picks a free one) and resolves with the bound `host:port`. */
  listen(address: string): Promise<string>;
  /** Flips one service's health status, or the whole server's with ''. */
  setServing(serviceTypeName: string, serving: boolean): void;
  /** Reports NOT_SERVING, lets in-flight calls finish for up to `graceMs`, then cancels what is left. */
  stop(graceMs?: number): Promise<void>;
}

type AnyCall = grpc.ServerUnaryCall<Message, Message> | grpc.ServerWritableStream<Message, Message>;

const REQUEST_ID_KEY = 'x-request-id';
const DEFAULT_GRACE_MS = 5_000;

/**
 * The largest message a service takes when its RPCs carry callers' bodies whole (a stored Response and its
 * context: at most 64 MiB of JSON at the edge, RESPONSES_MAX_STORED_BYTES), with room for the envelope. Set on
 * both ends: grpc-js refuses anything over 4 MiB by default.
 */
export const BODY_MESSAGE_MAX_BYTES = 65 * 1024 * 1024;

const defaultServerOptions: grpc.ServerOptions = {
  // A client resolves a headless Service's pod IPs only when it (re)connects. Ageing connections out makes
  // clients re-resolve every few minutes, so pods added by a scale-up start taking calls. Streams already
  // open are not cut (the grace is left unlimited).
  'grpc.max_connection_age_ms': 5 * 60_000,
};

export function createRpcServer(options: RpcServerOptions): RpcServer {
  const { logger } = options;
  const server = new grpc.Server({ ...defaultServerOptions, ...options.serverOptions });
  const board = new HealthBoard();
  let stopping: Promise<void> | undefined;

  function add(service: DescService, impl: Record<string, unknown>): void {
    const definition: Record<string, grpc.MethodDefinition<Message, Message>> = {};
    const handlers: grpc.UntypedServiceImplementation = {};
    for (const method of supportedMethods(service)) {
      const handler = impl[method.localName];
      if (typeof handler !== 'function') throw new Error(`No handler for ${methodPath(method)}`);
      definition[method.localName] = methodDefinition(method);
      handlers[method.localName] =
        method.methodKind === 'unary'
          ? bindUnary(method, handler as UnaryHandler<DescMethod>, logger)
          : bindServerStreaming(method, handler as ServerStreamingHandler<DescMethod>, logger);
    }
    server.addService(definition, handlers);
  }

  add(Health, createHealthImpl(board));

  return {
    add(service, impl) {
      add(service as unknown as DescService, impl as Record<string, unknown>);
      board.set(service.typeName, ServingStatus.SERVING);
    },

    async listen(address) {
      const colon = address.lastIndexOf(':');
      if (colon < 0) throw new Error(`listen needs host:port, got "${address}"`);
      const port = await new Promise<number>((resolve, reject) =>
        server.bindAsync(address, options.credentials ?? grpc.ServerCredentials.createInsecure(), (error, bound) =>
          error ? reject(error) : resolve(bound),
        ),
      );
      return `${address.slice(0, colon)}:${port}`;
    },

    setServing(serviceTypeName, serving) {
      // A typo here would silently leave a probe reading the wrong status, so unknown names are refused.
      if (!board.has(serviceTypeName)) throw new Error(`No service ${serviceTypeName} on this server`);
      board.set(serviceTypeName, serving ? ServingStatus.SERVING : ServingStatus.NOT_SERVING);
    },

    stop(graceMs = DEFAULT_GRACE_MS) {
      stopping ??= new Promise<void>((resolve) => {
        // NOT_SERVING first, so probes and health-checking balancers move traffic away while calls drain.
        board.shutDown();
        const force = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      });
      return stopping;
    },
  };
}

/** The caller's trace context from the call's metadata, when tracing is on. */
function traceParentOf(call: AnyCall) {
  return extractContext(call.metadata.getMap() as Record<string, string>);
}

function bindUnary(
  method: DescMethod,
  handler: UnaryHandler<DescMethod>,
  logger: Logger,
): grpc.handleUnaryCall<Message, Message> {
  const path = methodPath(method);
  return (call, callback) => {
    const { ctx, close } = openContext(call);
    const answer = async () => create(method.output, await handler(call.request, ctx));
    // With tracing on, the handler runs in a server span continuing the caller's trace.
    const answered = tracingEnabled() ? inSpan(path, SpanKind.SERVER, traceParentOf(call), answer) : answer();
    // Building the message inside the async step routes a bad response shape through `failure` too.
    answered
      .then(
        (response) => callback(null, response),
        (thrown: unknown) => callback(failure(thrown, method, ctx, logger)),
      )
      .finally(close);
  };
}

function bindServerStreaming(
  method: DescMethod,
  handler: ServerStreamingHandler<DescMethod>,
  logger: Logger,
): grpc.handleServerStreamingCall<Message, Message> {
  const path = methodPath(method);
  return (call) => {
    const { ctx, close } = openContext(call);
    const stream = () => pump(call, method, () => handler(call.request, ctx), ctx, logger);
    void (tracingEnabled() ? inSpan(path, SpanKind.SERVER, traceParentOf(call), stream) : stream()).finally(close);
  };
}

/** Writes what the handler yields, honouring back-pressure, and ends the call with OK or the failure. */
async function pump(
  call: grpc.ServerWritableStream<Message, Message>,
  method: DescMethod,
  start: () => AsyncIterable<MessageInitShape<DescMethod['output']>>,
  ctx: RpcContext,
  logger: Logger,
): Promise<void> {
  try {
    for await (const item of start()) {
      // Leaving the loop calls the iterator's return(), so the handler's finally blocks still run.
      if (ctx.signal.aborted) return;
      if (!call.write(create(method.output, item))) await drained(call, ctx.signal);
    }
    if (!ctx.signal.aborted) call.end();
  } catch (thrown) {
    const status = failure(thrown, method, ctx, logger);
    // grpc-js turns an 'error' event on a server stream into the call's final status.
    if (!ctx.signal.aborted) call.emit('error', status);
  }
}

function drained(call: grpc.ServerWritableStream<Message, Message>, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const finish = () => {
      call.off('drain', finish);
      signal.removeEventListener('abort', finish);
      resolve();
    };
    call.once('drain', finish);
    signal.addEventListener('abort', finish, { once: true });
  });
}

/**
 * The handler's view of a call. The signal aborts on the caller's cancel (grpc-js 'cancelled', which a
 * client-side deadline also causes) and on our own timer at the deadline, since a server-side deadline
 * only makes grpc-js answer DEADLINE_EXCEEDED without telling the handler.
 */
function openContext(call: AnyCall): { ctx: RpcContext; close: () => void } {
  const controller = new AbortController();
  const onCancel = () => controller.abort(new ApiError('client_closed_request'));
  call.once('cancelled', onCancel);
  if (call.cancelled) onCancel();
  const deadline = deadlineOf(call.getDeadline());
  const timer = deadline
    ? setTimeout(
        () => controller.abort(new ApiError('client_closed_request', "The caller's deadline passed.")),
        Math.max(0, deadline.getTime() - Date.now()),
      )
    : undefined;
  timer?.unref();
  const ctx: RpcContext = { requestId: requestIdOf(call.metadata), signal: controller.signal, metadata: call.metadata };
  if (deadline) ctx.deadline = deadline;
  const actor = actorOfMetadata(call.metadata);
  if (actor) ctx.actor = actor;
  return {
    ctx,
    close() {
      clearTimeout(timer);
      call.off('cancelled', onCancel);
    },
  };
}

function deadlineOf(deadline: grpc.Deadline): Date | undefined {
  const ms = deadline instanceof Date ? deadline.getTime() : deadline;
  return Number.isFinite(ms) ? new Date(ms) : undefined;
}

function requestIdOf(metadata: grpc.Metadata): string {
  const [value] = metadata.get(REQUEST_ID_KEY);
  // Bounded, because it is copied into every log line about the call.
  return value === undefined ? '' : String(value).slice(0, 128);
}

/**
 * The status for a failed handler. Server-side failures (5xx) are logged here, once, with the request id;
 * a caller's mistake (4xx) is the caller's to report. After the caller has gone nothing is sent and a
 * failure is most likely the abort itself, so it is logged at debug only. The request is never logged.
 */
function failure(thrown: unknown, method: DescMethod, ctx: RpcContext, logger: Logger): ServerStatusError {
  const error = ApiError.from(thrown);
  const fields = { requestId: ctx.requestId, rpc: methodPath(method), code: error.code, err: thrown };
  if (ctx.signal.aborted) logger.debug(fields, 'rpc handler failed after the caller left');
  else if (error.status >= 500) logger.error(fields, 'rpc handler failed');
  return toServerStatus(thrown);
}
