// Guards the codegen wiring (buf.gen.yaml → libs/proto/src/gen, imported by others as `@sbc/proto/*`), not protobuf-es.
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { Health } from './gen/grpc/health/v1/health_pb';
import { ErrorDetailSchema } from './gen/sbc/errors/v1/error_detail_pb';

describe('generated code', () => {
  it('keeps the wire names of the standard health service so stock probes can call it', () => {
    expect(Health.typeName).toBe('grpc.health.v1.Health');
    expect(Health.method.check.methodKind).toBe('unary');
    expect(Health.method.watch.methodKind).toBe('server_streaming');
    expect(Health.method.watch.name).toBe('Watch');
  });

  it('an ErrorDetail survives a binary round trip, telling an absent param from an empty one', () => {
    const detail = create(ErrorDetailSchema, {
      code: 'invalid_request',
      message: 'bad',
      param: '',
      issues: [{ path: 'model', code: 'invalid_type', message: 'model is required' }],
      hasIssues: true,
      extraJson: '{"a":1}',
    });
    const decoded = fromBinary(ErrorDetailSchema, toBinary(ErrorDetailSchema, detail));
    expect(decoded).toEqual(detail);
    expect(decoded.param).toBe('');
    expect(
      fromBinary(ErrorDetailSchema, toBinary(ErrorDetailSchema, create(ErrorDetailSchema, {}))).param,
    ).toBeUndefined();
  });
});
