import { z } from 'zod';
import { DateTime, listOf, pageQuery } from '../common';
import { defineRoute, type RouteSpec } from '../route';

// The audit log (issue 45, CONTRACTS "Audit records").
const TAG = 'Audit';

/** The kinds of resource a record is about. */
export const AUDIT_RESOURCE_TYPES = [
  'key',
  'endpoint',
  'mcp_server',
  'alias',
  'team',
  'team_member',
  'team_invite',
  'device',
  'webhook',
  'x_build',
  'x_builds_queue',
  'x_builds_block',
] as const;

const Snapshot = z
  .record(z.string(), z.unknown())
  .nullable()
  .meta({ description: 'The resource as JSON (snake_case), secrets masked; null for a creation or a deletion.' });

export const AuditEvent = z
  .object({
    id: z.string().meta({ description: '`aud_…`' }),
    object: z.literal('audit_event'),
    actor: z
      .object({
        user_id: z.string(),
        key_id: z.string().optional().meta({ description: 'The caller key used, when the change was made with one.' }),
        session: z.string().optional().meta({
          description: 'The session used (`ses_` and the start of its token’s hash, never the token).',
        }),
        device_id: z.string().optional().meta({ description: 'The paired device whose token was used.' }),
      })
      .loose(),
    action: z.string().meta({ description: '`<resource type>.<verb>`, e.g. `key.revoke`.' }),
    resource: z.object({ type: z.enum(AUDIT_RESOURCE_TYPES), id: z.string() }).loose(),
    ip: z.string().nullable().meta({ description: 'The address the change came from.' }),
    at: DateTime,
    changes: z.object({ before: Snapshot, after: Snapshot }).loose(),
  })
  .loose()
  .meta({ id: 'AuditEvent' });

export const listAuditEvents = defineRoute({
  operationId: 'listAuditEvents',
  method: 'get',
  path: '/v1/audit',
  summary: 'List audit records',
  description:
    'Every change to keys, endpoints, MCP tool servers, aliases, teams, members, invites, devices, webhooks and ' +
    'X builds operator actions, newest first: who made it (user, and key or session), when, from which address, ' +
    'and the resource before and after with secrets masked. You see the records of your own account, and of your ' +
    'teams where you are an owner or an admin; the service’s operators also read every operator’s X builds ' +
    'actions. Records are append-only.',
  tag: TAG,
  auth: { kind: 'scoped', scopes: ['audit:read'] },
  query: pageQuery({
    actor: z.string().min(1).max(64).optional().meta({ description: 'Only changes made by this user (`usr_…`).' }),
    action: z
      .string()
      .regex(/^[a-z_]+\.[a-z_]+$/, 'Expected `<resource type>.<verb>`, e.g. key.revoke.')
      .max(64)
      .optional(),
    resource_type: z.enum(AUDIT_RESOURCE_TYPES).optional(),
    resource_id: z
      .string()
      .min(1)
      .max(128)
      .optional()
      .meta({ description: 'Only changes to this resource (a key id, a team id, an alias’s `@token`…).' }),
    from: DateTime.optional().meta({ description: 'Records at or after this instant.' }),
    to: DateTime.optional().meta({ description: 'Records before this instant.' }),
  }),
  responses: { 200: { description: 'A page of records.', schema: listOf(AuditEvent, 'AuditEventList') } },
});

export const AUDIT_ROUTES: readonly RouteSpec[] = [listAuditEvents];
