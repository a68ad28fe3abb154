export { healthRoutes } from './health';
export { listen, type RunningHttpServer } from './listen';
