import type { Metadata } from '@grpc/grpc-js';
import type { DescMessage, MessageInitShape, MessageShape } from '@bufbuild/protobuf';
import type { GenService, GenServiceMethods } from '@bufbuild/protobuf/codegenv2';
import type { Actor } from './actor';

/** What a handler knows about its call besides the request message. */
export interface RpcContext {
  /** The caller's `x-request-id`, or '' when it sent none; log it with every line about this call. */
  requestId: string;
  /** When the caller stops waiting; absent only for callers outside @sbc/rpc that set no deadline. */
  deadline?: Date;
  /** Aborts when the caller cancels, its deadline passes or the server is force-stopped: stop work then. */
  signal: AbortSignal;
  /** The raw request metadata, for anything beyond the request id. */
  metadata: Metadata;
  /** Who the edge says made the call, for the audit log; absent on calls that carry none. */
  actor?: Actor;
}

type MethodShape = { input: DescMessage; output: DescMessage; methodKind: string };

export type UnaryHandler<M extends MethodShape> = (
  request: MessageShape<M['input']>,
  ctx: RpcContext,
) => Promise<MessageInitShape<M['output']>>;

export type ServerStreamingHandler<M extends MethodShape> = (
  request: MessageShape<M['input']>,
  ctx: RpcContext,
) => AsyncIterable<MessageInitShape<M['output']>>;

/**
 * The implementation of a generated service, typed from its descriptor. Client- and bidi-streaming methods
 * map to `never`, so a service that declares them fails to type-check instead of failing at run time.
 */
export type ServiceImpl<S extends GenServiceMethods> = {
  [K in keyof S]: S[K]['methodKind'] extends 'unary'
    ? UnaryHandler<S[K]>
    : S[K]['methodKind'] extends 'server_streaming'
      ? ServerStreamingHandler<S[K]>
      : never;
};

export interface CallOptions {
  /** Sent as `x-request-id` so the callee's logs join the caller's. */
  requestId?: string;
  /** Overrides the client's default deadline for this call (for a stream: its whole lifetime). */
  deadlineMs?: number;
  /** Aborting cancels the call; the server handler's own signal aborts in turn. */
  signal?: AbortSignal;
  /** Who is making the change this call asks for (the audit log's actor). */
  actor?: Actor;
}

export type UnaryCall<M extends MethodShape> = (
  request: MessageInitShape<M['input']>,
  options?: CallOptions,
) => Promise<MessageShape<M['output']>>;

export type ServerStreamingCall<M extends MethodShape> = (
  request: MessageInitShape<M['input']>,
  options?: CallOptions,
) => AsyncIterable<MessageShape<M['output']>>;

/** A promise client for a generated service: one method per RPC, named as in the generated code. */
export type RpcClient<S extends GenServiceMethods> = {
  [K in keyof S]: S[K]['methodKind'] extends 'unary'
    ? UnaryCall<S[K]>
    : S[K]['methodKind'] extends 'server_streaming'
      ? ServerStreamingCall<S[K]>
      : never;
} & {
  /** Closes the channel; calls still in flight fail with `service_unavailable`. */
  close(): void;
};

type MethodsOf<T> = T extends GenService<infer S> ? S : never;

/** The promise client of a generated service constant: `RpcClientOf<typeof AccountService>`. */
export type RpcClientOf<T> = RpcClient<MethodsOf<T>>;

/** The implementation of a generated service constant: `RpcImplementation<typeof AccountService>`. */
export type RpcImplementation<T> = ServiceImpl<MethodsOf<T>>;
