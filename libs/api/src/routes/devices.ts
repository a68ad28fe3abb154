import { z } from 'zod';
import { DateTime, listOf, pageQuery } from '../common';
import { defineRoute } from '../route';

// Device pairing is OAuth 2.0 Device Authorization Grant (RFC 8628, CONTRACTS "Identity"): the device asks
// for a code pair, its user approves the short code while signed in, and the device polls for its token.
const TAG = 'Devices';

// The presence rule the account service applies (apps/account/src/devices/presence.ts), for the descriptions.
const HEARTBEAT_EVERY_S = 30;
const RECORD_EVERY_S = 25;
const ONLINE_WINDOW_S = 90;

// One shape each for what a device declares and what is shown back: strict (and bounded) on the way in,
// open to additional properties on the way out, as the spec allows them.
const capabilitiesShape = {
  tools_count: z.number().int().min(0).max(100_000),
  hub_port: z.number().int().min(1).max(65_535).optional(),
  helper_version: z.string().min(1).max(64).optional(),
  held_vendors: z.array(z.string().min(1).max(64)).max(200),
  held_models: z.array(z.string().min(1).max(200)).max(2_000),
};
const agentShape = {
  agent_vendor: z
    .string()
    .min(1)
    .max(64)
    .meta({ description: 'The agent VM vendor as it declared itself at link time; `generic` for any other agent.' }),
  tier: z.enum(['link', 'data']),
};
const declarationShape = {
  kind: z.string().min(1).max(32).meta({ description: 'What sort of device this is, e.g. `desktop`, `cli`, `agent`.' }),
  label: z.string().trim().min(1).max(64).meta({ description: 'The name shown in the device list.' }),
  fingerprint: z.string().min(1).max(256).meta({ description: 'A stable identifier the device computes for itself.' }),
};

export const DeviceCapabilities = z.object(capabilitiesShape).loose().meta({ id: 'DeviceCapabilities' });
export const AgentDeviceFacet = z.object(agentShape).loose().meta({ id: 'AgentDeviceFacet' });

export const Device = z
  .object({
    id: z.string().meta({ description: '`dev_…`' }),
    object: z.literal('device'),
    ...declarationShape,
    created_at: DateTime,
    last_seen_at: DateTime.nullable().meta({
      description: `The last recorded heartbeat; recorded at most once every ${RECORD_EVERY_S} s per device.`,
    }),
    online: z
      .boolean()
      .meta({ description: `True while the last recorded heartbeat is at most ${ONLINE_WINDOW_S} s old.` }),
    capabilities: DeviceCapabilities.optional(),
    agent: AgentDeviceFacet.optional(),
  })
  .loose()
  .meta({ id: 'Device' });

const DeviceInput = {
  capabilities: z.strictObject(capabilitiesShape).optional(),
  agent: z.strictObject(agentShape).optional().meta({ description: 'Set when the device is an agent VM.' }),
};

/** What an unapproved grant shows its approver: the device as it declared itself. */
const PairingDevice = z
  .object({ ...declarationShape, capabilities: DeviceCapabilities.optional(), agent: AgentDeviceFacet.optional() })
  .loose()
  .meta({ id: 'PairingDevice' });

const DeviceIdParams = z.object({
  device_id: z
    .string()
    .regex(/^dev_[0-9A-HJKMNP-TV-Z]{26}$/, 'Expected a device id (dev_…).')
    .meta({ description: '`dev_…`' }),
});

const UserCodeBody = z
  .strictObject({
    user_code: z
      .string()
      .min(1)
      .max(32)
      .meta({ description: 'The code the device shows, with or without its dash, in any case.' }),
  })
  .meta({ id: 'DeviceUserCode' });

export const startDevicePairing = defineRoute({
  operationId: 'startDevicePairing',
  method: 'post',
  path: '/v1/devices/pair',
  summary: 'Start pairing a device',
  description:
    'RFC 8628 device authorization request; needs no credential. Show `user_code` to the user, who approves it while ' +
    'signed in (POST /v1/devices/pair/approve, or at `verification_uri`); meanwhile poll POST /v1/devices/pair/token ' +
    'no faster than every `interval` seconds.',
  tag: TAG,
  auth: { kind: 'none' },
  body: z.strictObject({ ...declarationShape, ...DeviceInput }).meta({ id: 'DevicePairingRequest' }),
  responses: {
    200: {
      description: 'A grant, pending until approved.',
      schema: z
        .object({
          device_code: z.string().meta({ description: 'The secret the device polls with; keep it on the device.' }),
          user_code: z.string().meta({ description: 'Eight letters shown as `XXXX-XXXX`, for the user to approve.' }),
          verification_uri: z.url(),
          verification_uri_complete: z
            .url()
            .optional()
            .meta({ description: '`verification_uri` with the user code filled in.' }),
          expires_in: z.number().int().meta({ description: 'Seconds until the grant expires.' }),
          interval: z.number().int().meta({ description: 'Seconds to wait between polls.' }),
        })
        .loose()
        .meta({ id: 'DeviceAuthorization' }),
    },
  },
  errors: [429],
});

export const PairingDecision = z
  .object({
    ok: z.literal(true),
    status: z.enum(['approved', 'denied']),
    user_code: z.string().meta({ description: 'As shown: XXXX-XXXX.' }),
    device: PairingDevice,
  })
  .loose()
  .meta({ id: 'DevicePairingDecision' });

const approval = (verb: 'approve' | 'deny') =>
  defineRoute({
    operationId: verb === 'approve' ? 'approveDevicePairing' : 'denyDevicePairing',
    method: 'post',
    path: `/v1/devices/pair/${verb}`,
    summary: verb === 'approve' ? 'Approve a pairing' : 'Deny a pairing',
    description:
      verb === 'approve'
        ? "Signed-in session only. Binds the pending grant to the session's account; the device's next poll returns " +
          'its token.'
        : "Signed-in session only. The device's next poll answers `access_denied`.",
    tag: TAG,
    auth: { kind: 'session' },
    body: UserCodeBody,
    responses: {
      200: {
        description: verb === 'approve' ? 'Approved.' : 'Denied.',
        schema: PairingDecision,
      },
    },
    errors: [404],
  });

export const approveDevicePairing = approval('approve');
export const denyDevicePairing = approval('deny');

export const exchangeDeviceCode = defineRoute({
  operationId: 'exchangeDeviceCode',
  method: 'post',
  path: '/v1/devices/pair/token',
  summary: 'Poll for the device token',
  description:
    'RFC 8628 device access token request; needs no credential. Until approval it answers 400 with `error` set to ' +
    '`authorization_pending`, or `slow_down` when polled faster ' +
    'than `interval` (the interval grows by 5 s, echoed in ' +
    '`interval`); then `expired_token`, `access_denied`, or ' +
    '`invalid_grant` for an unknown or already exchanged code. ' +
    'Each refusal also carries RFC 6749 `error_description`. An approved grant is exchanged once.',
  tag: TAG,
  auth: { kind: 'none' },
  body: z
    .strictObject({
      device_code: z.string().min(1).max(256),
      grant_type: z
        .literal('urn:ietf:params:oauth:grant-type:device_code')
        .optional()
        .meta({ description: 'Accepted for RFC 8628 clients; implied.' }),
    })
    .meta({ id: 'DeviceTokenRequest' }),
  responses: {
    200: {
      description: 'The device token (shown once) and the new device.',
      schema: z
        .object({
          device_token: z.string().meta({
            description: '`sbd_…`: send as `Authorization: Bearer`; works like a session, unnarrowed by scopes.',
          }),
          device: Device,
        })
        .loose()
        .meta({ id: 'DeviceToken' }),
    },
  },
});

export const recordDeviceHeartbeat = defineRoute({
  operationId: 'recordDeviceHeartbeat',
  method: 'post',
  path: '/v1/devices/heartbeat',
  summary: 'Report that this device is alive',
  description:
    `Device token only. Send every ${HEARTBEAT_EVERY_S} s; the device is \`online\` while its last ` +
    `recorded heartbeat is at most ${ONLINE_WINDOW_S} s old. A heartbeat is recorded at most once ` +
    `every ${RECORD_EVERY_S} s per device; \`capabilities\`, when sent, replace the stored ones with the next ` +
    `recorded heartbeat.`,
  tag: TAG,
  auth: { kind: 'any' },
  body: z.strictObject({ capabilities: z.strictObject(capabilitiesShape).optional() }).meta({ id: 'DeviceHeartbeat' }),
  responses: { 204: { description: 'Noted.' } },
  errors: [403],
});

export const listDevices = defineRoute({
  operationId: 'listDevices',
  method: 'get',
  path: '/v1/devices',
  summary: 'List devices',
  description: 'Paired devices of the account, newest first.',
  tag: TAG,
  auth: { kind: 'scoped', scopes: ['devices:read'] },
  query: pageQuery(),
  responses: { 200: { description: 'A page of devices.', schema: listOf(Device, 'DeviceList') } },
});

export const getDevice = defineRoute({
  operationId: 'getDevice',
  method: 'get',
  path: '/v1/devices/{device_id}',
  summary: 'Get a device',
  tag: TAG,
  auth: { kind: 'scoped', scopes: ['devices:read'] },
  params: DeviceIdParams,
  responses: { 200: { description: 'The device.', schema: Device } },
  errors: [404],
});

export const renameDevice = defineRoute({
  operationId: 'renameDevice',
  method: 'patch',
  path: '/v1/devices/{device_id}',
  summary: 'Rename a device',
  tag: TAG,
  auth: { kind: 'scoped', scopes: ['devices:write'] },
  params: DeviceIdParams,
  body: z.strictObject({ label: declarationShape.label }).meta({ id: 'DeviceUpdate' }),
  responses: { 200: { description: 'The renamed device.', schema: Device } },
  errors: [404],
});

export const unlinkDevice = defineRoute({
  operationId: 'unlinkDevice',
  method: 'delete',
  path: '/v1/devices/{device_id}',
  summary: 'Unlink a device',
  description: "Removes the device; its token is refused (401) from the device's next call, at every edge.",
  tag: TAG,
  auth: { kind: 'scoped', scopes: ['devices:write'] },
  params: DeviceIdParams,
  responses: {
    200: {
      description: 'Unlinked.',
      schema: z
        .object({ id: z.string(), object: z.literal('device'), deleted: z.literal(true) })
        .loose()
        .meta({ id: 'DeletedDevice' }),
    },
  },
  errors: [404],
});

export const DEVICE_ROUTES = [
  startDevicePairing,
  approveDevicePairing,
  denyDevicePairing,
  exchangeDeviceCode,
  recordDeviceHeartbeat,
  listDevices,
  getDevice,
  renameDevice,
  unlinkDevice,
];
