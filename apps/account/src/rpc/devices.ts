import type { MessageInitShape } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { ApiError } from '@sbc/errors';
import { KEY_REVOKED_CHANNEL } from '@sbc/events';
import {
  DeviceService,
  type AgentDeviceFacet,
  type AgentDeviceFacetSchema,
  type DeviceCapabilities,
  type DeviceCapabilitiesSchema,
  type DeviceDeclaration as DeclarationMessage,
  type DeviceDeclarationSchema,
  type DeviceSchema,
} from '@sbc/proto/sbc/account/v1/devices_pb';
import type { RpcContext, RpcImplementation } from '@sbc/rpc';
import { formatUserCode, normaliseUserCode } from '../devices/pairing';
import { isOnline } from '../devices/presence';
import type { Prisma } from '../generated/prisma/client';
import { stringsOf } from '../store/json-columns';
import {
  createPairing,
  decidePairing,
  deleteDevice,
  findDevice,
  listDevices,
  pollPairing,
  recordHeartbeat,
  renameDevice,
  type DeviceDeclaration,
  type DevicePairingRow,
  type DeviceRow,
  type PollResult,
} from '../store/devices';
import type { AccountServiceDeps } from './account-service';
import { recordAs } from './audit';

// Capabilities and the agent facet are stored as the spec's JSON objects (snake_case), as the REST surface shows them.

function capabilitiesJson(message: DeviceCapabilities | undefined): Prisma.InputJsonObject | null {
  if (!message) return null;
  return {
    tools_count: message.toolsCount,
    ...(message.hubPort !== undefined ? { hub_port: message.hubPort } : {}),
    ...(message.helperVersion !== undefined ? { helper_version: message.helperVersion } : {}),
    held_vendors: message.heldVendors,
    held_models: message.heldModels,
  };
}

function agentJson(message: AgentDeviceFacet | undefined): Prisma.InputJsonObject | null {
  return message ? { agent_vendor: message.agentVendor, tier: message.tier } : null;
}

function record(value: Prisma.JsonValue): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : null;
}

function capabilitiesMessage(value: Prisma.JsonValue): MessageInitShape<typeof DeviceCapabilitiesSchema> | undefined {
  const json = record(value);
  if (!json) return undefined;
  return {
    toolsCount: typeof json.tools_count === 'number' ? json.tools_count : 0,
    hubPort: typeof json.hub_port === 'number' ? json.hub_port : undefined,
    helperVersion: typeof json.helper_version === 'string' ? json.helper_version : undefined,
    heldVendors: stringsOf(json.held_vendors),
    heldModels: stringsOf(json.held_models),
  };
}

function agentMessage(value: Prisma.JsonValue): MessageInitShape<typeof AgentDeviceFacetSchema> | undefined {
  const json = record(value);
  return json ? { agentVendor: String(json.agent_vendor ?? 'generic'), tier: String(json.tier ?? 'link') } : undefined;
}

function declarationOf(message: DeclarationMessage | undefined): DeviceDeclaration {
  if (!message) throw new ApiError('invalid_request', 'device is required.', { param: 'device' });
  return {
    kind: message.kind,
    label: message.label,
    fingerprint: message.fingerprint,
    capabilities: capabilitiesJson(message.capabilities),
    agent: agentJson(message.agent),
  };
}

function declarationMessage(grant: DevicePairingRow): MessageInitShape<typeof DeviceDeclarationSchema> {
  return {
    kind: grant.kind,
    label: grant.label,
    fingerprint: grant.fingerprint,
    capabilities: capabilitiesMessage(grant.capabilities),
    agent: agentMessage(grant.agent),
  };
}

function deviceMessage(row: DeviceRow, now: Date): MessageInitShape<typeof DeviceSchema> {
  return {
    id: row.id,
    kind: row.kind,
    label: row.label,
    fingerprint: row.fingerprint,
    createdAt: timestampFromDate(row.createdAt),
    lastSeenAt: row.lastSeenAt ? timestampFromDate(row.lastSeenAt) : undefined,
    online: isOnline(row.lastSeenAt, now),
    capabilities: capabilitiesMessage(row.capabilities),
    agent: agentMessage(row.agent),
  };
}

const POLL_REFUSALS: Record<Exclude<PollResult['outcome'], 'issue'>, string> = {
  authorization_pending: 'The user has not approved this pairing yet; poll again after the interval.',
  slow_down: 'Polling faster than the interval; the interval is now longer.',
  expired_token: 'This pairing expired before it was approved; start a new one.',
  access_denied: 'The user denied this pairing.',
  invalid_grant: 'This device code is unknown or was already exchanged.',
};

function sha256(bytes: Uint8Array, param: string): Buffer {
  if (bytes.length !== 32) throw new ApiError('invalid_request', `${param} must be 32 bytes`, { param });
  return Buffer.from(bytes);
}

const notFound = () => new ApiError('not_found', 'No such device on this account.', { param: 'device_id' });

export function createDeviceService(deps: AccountServiceDeps): RpcImplementation<typeof DeviceService> {
  const now = deps.now ?? (() => new Date());

  const decide = async (
    request: { userId: string; userCode: string },
    decision: 'approved' | 'denied',
    ctx: RpcContext,
  ) => {
    const userCode = normaliseUserCode(request.userCode);
    const grant = userCode
      ? await decidePairing(
          deps.db,
          { userCode, userId: request.userId, decision, now: now() },
          recordAs(ctx, request.userId),
        )
      : null;
    if (!grant)
      throw new ApiError(
        'not_found',
        'No pending pairing has this code; it may have expired. Start pairing again on the device.',
        { param: 'user_code' },
      );
    return { userCode: formatUserCode(grant.userCode), device: declarationMessage(grant) };
  };

  return {
    async startDevicePairing(request) {
      const at = now();
      const grant = await createPairing(deps.db, {
        deviceCodeHash: sha256(request.deviceCodeSha256, 'device_code_sha256'),
        device: declarationOf(request.device),
        now: at,
      });
      return {
        userCode: formatUserCode(grant.userCode),
        expiresInS: Math.round((grant.expiresAt.getTime() - at.getTime()) / 1000),
        intervalS: grant.intervalS,
      };
    },

    approveDevicePairing: (request, ctx) => decide(request, 'approved', ctx),
    denyDevicePairing: (request, ctx) => decide(request, 'denied', ctx),

    async exchangeDeviceCode(request) {
      const at = now();
      const result = await pollPairing(deps.db, {
        deviceCodeHash: sha256(request.deviceCodeSha256, 'device_code_sha256'),
        deviceTokenHash: sha256(request.deviceTokenSha256, 'device_token_sha256'),
        now: at,
      });
      if (result.outcome === 'issue') return { device: deviceMessage(result.device, at) };
      const message = POLL_REFUSALS[result.outcome];
      // RFC 6749 §5.2 clients read `error_description`; `interval` tells a device how long to wait now.
      throw new ApiError(result.outcome, message, {
        param: 'device_code',
        extra: { error_description: message, interval: result.intervalS },
      });
    },

    async listDevices(request) {
      const page = await listDevices(deps.db, request.userId, {
        limit: request.limit,
        after_id: request.afterId,
        before_id: request.beforeId,
      });
      const at = now();
      return { devices: page.data.map((row) => deviceMessage(row, at)), hasMore: page.has_more };
    },

    async getDevice(request) {
      const row = await findDevice(deps.db, request.userId, request.deviceId);
      if (!row) throw notFound();
      return { device: deviceMessage(row, now()) };
    },

    async renameDevice(request, ctx) {
      const row = await renameDevice(
        deps.db,
        request.userId,
        request.deviceId,
        request.label,
        recordAs(ctx, request.userId),
      );
      if (!row) throw notFound();
      return { device: deviceMessage(row, now()) };
    },

    async unlinkDevice(request, ctx) {
      const row = await deleteDevice(deps.db, request.userId, request.deviceId, recordAs(ctx, request.userId));
      if (!row) throw notFound();
      await deps.pubsub.publish(KEY_REVOKED_CHANNEL, Buffer.from(row.tokenHash).toString('hex'));
      return { deviceId: row.id };
    },

    async recordDeviceHeartbeat(request) {
      const recorded = await recordHeartbeat(deps.db, {
        userId: request.userId,
        deviceId: request.deviceId,
        capabilities: capabilitiesJson(request.capabilities),
        now: now(),
      });
      return { recorded };
    },
  };
}
