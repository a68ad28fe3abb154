import type { RouteSpec } from '../route';

export const KEY_ROUTES: RouteSpec[] = [];
