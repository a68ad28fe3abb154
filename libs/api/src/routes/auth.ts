import type { RouteSpec } from '../route';

export const AUTH_ROUTES: RouteSpec[] = [];
