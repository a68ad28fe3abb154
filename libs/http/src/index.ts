export { healthRoutes } from './health';
export {
  DEFAULT_HTTP_LIMITS,
  listen,
  type ClientErrorStatus,
  type CloseOptions,
  type HttpLimits,
  type ListenOptions,
  type RenderClientError,
  type RunningHttpServer,
} from './listen';
