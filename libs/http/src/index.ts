export { healthRoutes } from './health';
export {
  listen,
  type ClientErrorStatus,
  type CloseOptions,
  type HttpLimits,
  type ListenOptions,
  type RenderClientError,
  type RunningHttpServer,
} from './listen';
export { SlotSet } from './slot-set';
