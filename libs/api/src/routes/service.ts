import { z } from 'zod';
import { defineRoute } from '../route';

const Health = z.object({ status: z.string() }).loose().meta({ id: 'Health' });

export const getOpenApiDocument = defineRoute({
  operationId: 'getOpenApiDocument',
  method: 'get',
  path: '/docs/openapi.json',
  summary: 'This document',
  tag: 'Service',
  auth: { kind: 'none' },
  responses: { 200: { description: 'OpenAPI 3.1.0 for every route the service serves.', schema: z.object({ openapi: z.string() }).loose() } },
});

export const getLiveness = defineRoute({
  operationId: 'getLiveness',
  method: 'get',
  path: '/healthz',
  summary: 'Liveness',
  tag: 'Service',
  auth: { kind: 'none' },
  responses: { 200: { description: 'The process is alive.', schema: Health } },
});

export const getReadiness = defineRoute({
  operationId: 'getReadiness',
  method: 'get',
  path: '/readyz',
  summary: 'Readiness',
  description: 'False (503) while draining or while the account service does not answer.',
  tag: 'Service',
  auth: { kind: 'none' },
  responses: { 200: { description: 'Ready to take traffic.', schema: Health } },
  errors: [503],
});

export const SERVICE_ROUTES = [getOpenApiDocument, getLiveness, getReadiness];
