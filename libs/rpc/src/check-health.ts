import { ApiError } from '@sbc/errors';
import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from '@sbc/proto/grpc/health/v1/health_pb';
import { createRpcClient } from './client';

export type HealthState = 'SERVING' | 'NOT_SERVING' | 'UNKNOWN' | 'SERVICE_UNKNOWN';

/**
 * One grpc.health.v1 Check against `target`, for readiness endpoints. It never throws: a peer that cannot
 * be reached in time reads as 'UNKNOWN', one that does not know the service as 'SERVICE_UNKNOWN', so a
 * caller only has to compare with 'SERVING'. `service` '' asks about the whole server.
 */
export async function checkHealth(target: string, service = '', deadlineMs = 1_000): Promise<HealthState> {
  const client = createRpcClient(Health, { target, deadlineMs });
  try {
    const { status } = await client.check({ service });
    return stateOf(status);
  } catch (error) {
    return error instanceof ApiError && error.code === 'not_found' ? 'SERVICE_UNKNOWN' : 'UNKNOWN';
  } finally {
    client.close();
  }
}

function stateOf(status: ServingStatus): HealthState {
  switch (status) {
    case ServingStatus.SERVING:
      return 'SERVING';
    case ServingStatus.NOT_SERVING:
      return 'NOT_SERVING';
    case ServingStatus.SERVICE_UNKNOWN:
      return 'SERVICE_UNKNOWN';
    default:
      return 'UNKNOWN';
  }
}
