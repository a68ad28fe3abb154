import type { RouteSpec } from '../route';

// Usage, credits and spend (issue 5): every route of this area, in document order.
export const USAGE_ROUTES: readonly RouteSpec[] = [];
