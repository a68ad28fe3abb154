import type { RouteSpec } from '../route';

export const UPSTREAM_ROUTES: RouteSpec[] = [];
