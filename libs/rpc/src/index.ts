export type { Actor } from './actor';
export { createAuditLog, type AuditedChange, type AuditLog } from './audit-log';
export { checkHealth, type HealthState } from './check-health';
export { channelOptionsFor, createRpcClient, type RpcClientOptions } from './client';
export { ERROR_DETAIL_KEY, fromServiceError, toServerStatus, type ServerStatusError } from './error-status';
export { BODY_MESSAGE_MAX_BYTES, createRpcServer, type RpcServer, type RpcServerOptions } from './server';
export type {
  CallOptions,
  RpcClient,
  RpcClientOf,
  RpcContext,
  RpcImplementation,
  ServerStreamingCall,
  ServerStreamingHandler,
  ServiceImpl,
  UnaryCall,
  UnaryHandler,
} from './types';
