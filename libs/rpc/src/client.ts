import * as grpc from '@grpc/grpc-js';
import { create, type DescMethod, type DescService, type Message, type MessageInitShape } from '@bufbuild/protobuf';
import type { GenService, GenServiceMethods } from '@bufbuild/protobuf/codegenv2';
import { ApiError } from '@sbc/errors';
import { injectContext, inSpan, SpanKind, tracingEnabled } from '@sbc/telemetry';
import { setActorMetadata } from './actor';
import { fromServiceError } from './error-status';
import { methodDefinition, supportedMethods } from './method-definition';
import type { CallOptions, RpcClient } from './types';

export interface RpcClientOptions {
  /** A grpc target: `host:port` for one peer, `dns:///name.namespace.svc:port` for a headless Service. */
  target: string;
  /** Deadline of every call unless the call sets its own; there is no way to call without one. */
  deadlineMs?: number;
  /** grpc-js channel options, applied over ours (including the load-balancing service config). */
  channelOptions?: grpc.ChannelOptions;
  /** Defaults to plaintext: calls stay inside the cluster (or the embedded process). */
  credentials?: grpc.ChannelCredentials;
}

const DEFAULT_DEADLINE_MS = 5_000;
const REQUEST_ID_KEY = 'x-request-id';

/**
 * Channel options for a target. A `dns:///` target naming a headless Kubernetes Service resolves to every
 * ready pod's IP. grpc's default policy, pick_first, would send every call over one connection to the first
 * pod; round_robin keeps a connection to each address and rotates calls across them, so load spreads over
 * all pods. The policy is set through the service config, and config from DNS TXT records is ignored so a
 * stray record cannot switch it off. Plain `host:port` targets (loopback, embedded mode, a ClusterIP that
 * balances per connection anyway) keep pick_first.
 */
export function channelOptionsFor(target: string): grpc.ChannelOptions {
  if (!target.startsWith('dns:')) return {};
  return {
    'grpc.service_config': JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }),
    'grpc.service_config_disable_resolution': 1,
  };
}

/** A promise client for a generated service. Failures reject with the ApiError the server threw. */
export function createRpcClient<S extends GenServiceMethods>(
  service: GenService<S>,
  options: RpcClientOptions,
): RpcClient<S> {
  const descriptor = service as unknown as DescService;
  const client = new grpc.Client(options.target, options.credentials ?? grpc.credentials.createInsecure(), {
    ...channelOptionsFor(options.target),
    ...options.channelOptions,
  });
  const defaults: CallDefaults = {
    client,
    service: descriptor.typeName,
    deadlineMs: options.deadlineMs ?? DEFAULT_DEADLINE_MS,
  };
  const methods: Record<string, unknown> = {};
  for (const method of supportedMethods(descriptor)) {
    methods[method.localName] =
      method.methodKind === 'unary' ? unaryCall(method, defaults) : serverStreamingCall(method, defaults);
  }
  return { ...methods, close: () => client.close() } as RpcClient<S>;
}

interface CallDefaults {
  client: grpc.Client;
  service: string;
  deadlineMs: number;
}

function unaryCall(method: DescMethod, defaults: CallDefaults) {
  const definition = methodDefinition(method);
  const call = sendUnary(method, definition, defaults);
  return (request: MessageInitShape<DescMethod['input']>, options: CallOptions = {}): Promise<Message> =>
    tracingEnabled()
      ? inSpan(definition.path, SpanKind.CLIENT, undefined, () => call(request, options))
      : call(request, options);
}

function sendUnary(method: DescMethod, definition: ReturnType<typeof methodDefinition>, defaults: CallDefaults) {
  return (request: MessageInitShape<DescMethod['input']>, options: CallOptions): Promise<Message> =>
    new Promise((resolve, reject) => {
      const { signal } = options;
      if (signal?.aborted) return reject(cancelledError(defaults.service));
      let cancelled = false;
      const call = defaults.client.makeUnaryRequest(
        definition.path,
        definition.requestSerialize,
        definition.responseDeserialize,
        create(method.input, request),
        metadataFor(options),
        { deadline: deadlineFor(options, defaults) },
        (error, response) => {
          signal?.removeEventListener('abort', cancel);
          if (error) reject(fromServiceError(error, defaults.service, cancelled));
          else if (response) resolve(response);
          else
            reject(
              new ApiError('internal_error', undefined, { cause: new Error(`${definition.path} returned no message`) }),
            );
        },
      );
      const cancel = () => {
        cancelled = true;
        call.cancel();
      };
      signal?.addEventListener('abort', cancel, { once: true });
    });
}

function serverStreamingCall(method: DescMethod, defaults: CallDefaults) {
  const definition = methodDefinition(method);
  // A generator, so the call starts when iteration starts and is cancelled when the caller stops early.
  return async function* stream(
    request: MessageInitShape<DescMethod['input']>,
    options: CallOptions = {},
  ): AsyncGenerator<Message> {
    const { signal } = options;
    if (signal?.aborted) throw cancelledError(defaults.service);
    const call = defaults.client.makeServerStreamRequest(
      definition.path,
      definition.requestSerialize,
      definition.responseDeserialize,
      create(method.input, request),
      metadataFor(options),
      { deadline: deadlineFor(options, defaults) },
    );
    // The status of a call we cancelled ourselves arrives as an 'error' after iteration stopped listening;
    // without a listener of our own that event would crash the process.
    call.on('error', () => undefined);
    let cancelled = false;
    const cancel = () => {
      cancelled = true;
      call.cancel();
    };
    signal?.addEventListener('abort', cancel, { once: true });
    let finished = false;
    try {
      for await (const message of call as AsyncIterable<Message>) yield message;
      finished = true;
    } catch (error) {
      finished = true;
      throw fromServiceError(error, defaults.service, cancelled);
    } finally {
      signal?.removeEventListener('abort', cancel);
      if (!finished) call.cancel();
    }
  };
}

function deadlineFor(options: CallOptions, defaults: CallDefaults): Date {
  const ms = options.deadlineMs ?? defaults.deadlineMs;
  return new Date(Date.now() + (Number.isFinite(ms) ? Math.max(0, ms) : defaults.deadlineMs));
}

function metadataFor(options: CallOptions): grpc.Metadata {
  const metadata = new grpc.Metadata();
  if (options.requestId) metadata.set(REQUEST_ID_KEY, options.requestId);
  if (options.actor) setActorMetadata(metadata, options.actor);
  // The trace context travels with the call (`traceparent`), so the service's span joins the caller's trace.
  if (tracingEnabled()) for (const [key, value] of Object.entries(injectContext({}))) metadata.set(key, value);
  return metadata;
}

function cancelledError(service: string): ApiError {
  return new ApiError('client_closed_request', `The call to ${service} was cancelled.`);
}
