/**
 * Names of the pub/sub channels and bus topics that cross service boundaries (`<domain>.<event>.v<n>`).
 * Publisher and subscribers import the name from here so they cannot drift apart. Also `storableText`, the
 * rule every string of a usage event follows on both sides of the bus.
 */

/**
 * Published by the account service with the hex SHA-256 of a credential that stopped working (a revoked key,
 * an ended session, an unlinked device); every edge drops it from its cache at once.
 */
export const KEY_REVOKED_CHANNEL = 'account.key-revoked.v1';

/**
 * Published by the account service when an account's routing table (custom endpoints, personal aliases)
 * changed; every edge drops its cached table. Message: the user id (`usr_…`) whose table changed, or the team id
 * (`org_…`) when a team's shared endpoint changed, which every team key's table includes.
 */
export const ROUTING_CHANGED_CHANNEL = 'account.routing-changed.v1';

/**
 * Published by the account service after a personal alias was written or deleted, for paired devices (the
 * edge relays it on `GET /v1/aliases/events`). Message: JSON `{user_id, token, rev, deleted}`, `token` with its
 * "@", `rev` the user's alias revision after the change.
 */
export const ALIASES_CHANGED_CHANNEL = 'account.aliases-changed.v1';

/**
 * Published by the account service when the MCP tool servers a credential may use changed: a server written, probed
 * or deleted, or a team's pool changed (a member joined, left or changed role, the share policy changed). Every edge
 * drops its cached tool-server tables for it. Message: the user id (`usr_…`) whose own servers changed, or the team
 * id (`org_…`) whose pool changed, which every team key's table includes.
 */
export const MCP_SERVERS_CHANGED_CHANNEL = 'account.mcp-servers-changed.v1';

/** Kafka topic of usage events (value: protobuf UsageEvent, key: account id). */
export const USAGE_EVENTS_TOPIC = 'usage.events.v1';

/**
 * Published by the X builds service when a published app changed (a new bundle, or taken down); every edge
 * drops the slug from its apps-host cache, so a take-down answers 410 at once. Message: the slug.
 */
export const XBUILDS_APP_CHANGED_CHANNEL = 'xbuilds.app-changed.v1';

/**
 * Published by the X builds service when a job is cancelled; the replica running it aborts the stage at once. Message:
 * the job id.
 */
export const XBUILDS_JOB_CANCELLED_CHANNEL = 'xbuilds.job-cancelled.v1';

export { storableText } from './storable-text';
