import type { RouteSpec } from '../route';

export const DEVICE_ROUTES: RouteSpec[] = [];
