import type { MethodDefinition } from '@grpc/grpc-js';
import { fromBinary, toBinary, type DescMethod, type DescService, type Message } from '@bufbuild/protobuf';

/** The two method kinds @sbc/rpc binds; client and bidi streaming have no caller yet. */
type SupportedKind = 'unary' | 'server_streaming';

/** The HTTP/2 path grpc-js routes on: `/<package>.<Service>/<Method>`, exactly as in the .proto. */
export function methodPath(method: DescMethod): string {
  return `/${method.parent.typeName}/${method.name}`;
}

function assertSupported(method: DescMethod): SupportedKind {
  if (method.methodKind === 'unary' || method.methodKind === 'server_streaming') return method.methodKind;
  throw new Error(`@sbc/rpc does not bind ${method.methodKind} methods (${methodPath(method)})`);
}

/**
 * A grpc-js method definition whose (de)serialisers are protobuf-es binary codecs, so no proto-loader and no
 * reflection at run time. Callers `create` messages from init shapes before handing them over, so a bad
 * value fails in our code (and is reported as such) rather than inside grpc-js.
 */
export function methodDefinition(method: DescMethod): MethodDefinition<Message, Message> {
  const kind = assertSupported(method);
  return {
    path: methodPath(method),
    requestStream: false,
    responseStream: kind === 'server_streaming',
    originalName: method.localName,
    requestSerialize: (value) => asBuffer(toBinary(method.input, value)),
    requestDeserialize: (bytes) => fromBinary(method.input, bytes),
    responseSerialize: (value) => asBuffer(toBinary(method.output, value)),
    responseDeserialize: (bytes) => fromBinary(method.output, bytes),
  };
}

export function supportedMethods(service: DescService): DescMethod[] {
  for (const method of service.methods) assertSupported(method);
  return service.methods;
}

/** grpc-js wants a Buffer; wrap the encoder's bytes without copying them. */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
