import type { RouteSpec } from '../route';

// Projects, runs and webhooks (issue 7): every route of this area, in document order.
export const RUN_ROUTES: readonly RouteSpec[] = [];
