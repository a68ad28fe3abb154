import type { RouteSpec } from '../route';

// X builds (issue 6): every route of this area, in document order.
export const X_BUILD_ROUTES: readonly RouteSpec[] = [];
