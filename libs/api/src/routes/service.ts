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
  responses: {
    200: {
      description: 'OpenAPI 3.1.0 for every route the service serves.',
      schema: z.object({ openapi: z.string() }).loose(),
    },
  },
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

const ServiceDocument = z
  .object({
    openapi: z.string(),
    info: z.object({ title: z.string(), version: z.string() }).loose(),
    paths: z.record(z.string(), z.unknown()),
    'x-path-templates': z.array(z.unknown()),
    'x-house-replay': z.object({}).loose(),
  })
  .loose()
  .meta({
    id: 'ServiceDocument',
    description:
      "A shipped service's learned endpoints: OpenAPI 3.1.0 with `x-path-templates` and `x-house-replay`; shapes, " +
      'header rule names and provenance, never an example value or a credential.',
  });

export const getServiceDocument = defineRoute({
  operationId: 'getServiceDocument',
  method: 'get',
  path: '/docs/services/{service_id}.json',
  summary: 'A service document',
  description: 'No credential needed (a live caller key or session is also accepted).',
  tag: 'Service',
  auth: { kind: 'none' },
  params: z.object({ service_id: z.string().meta({ description: 'A shipped service id.' }) }),
  responses: {
    200: { description: "The service's learned endpoints as an OpenAPI 3.1.0 document.", schema: ServiceDocument },
  },
  errors: [404],
});

export const SERVICE_ROUTES = [getOpenApiDocument, getServiceDocument, getLiveness, getReadiness];
