import type { RouteSpec } from '../route';

export const TEAM_ROUTES: RouteSpec[] = [];
