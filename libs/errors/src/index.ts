export { ApiError, isApiError, type ApiErrorOptions, type Issue } from './api-error';
export { docUrl, toEnvelope, type ErrorEnvelope } from './envelope';
export {
  codeForGrpcStatus,
  errorCodes,
  errorSpec,
  GrpcStatus,
  isErrorCode,
  type ErrorCode,
  type ErrorSpec,
} from './registry';
export { issuesFromSchema } from './zod-issues';
