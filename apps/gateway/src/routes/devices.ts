import { randomBytes } from 'node:crypto';
import { Router } from 'express';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { timestampDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import { deviceRoutes as specs } from '@sbc/api';
import { ApiError } from '@sbc/errors';
import { hashSecret, newSecret } from '@sbc/ids';
import type {
  Device,
  DeviceCapabilities,
  DeviceCapabilitiesSchema,
  DeviceDeclaration,
  DeviceService,
} from '@sbc/proto/sbc/account/v1/devices_pb';
import type { RpcClientOf } from '@sbc/rpc';
import { listEnvelope, mapPage } from '@sbc/pagination';
import type { Authorize } from '../auth/authorize';
import { mount } from '../http/mount';
import type { SignInThrottle } from '../limits/sign-in-throttle';

export interface DeviceRoutesDeps {
  authorize: Authorize;
  devices: RpcClientOf<typeof DeviceService>;
  /** The edge's public address; the verification URI a device shows points there. */
  baseUrl: string;
  throttle: SignInThrottle;
}

interface CapabilitiesBody {
  tools_count: number;
  hub_port?: number;
  helper_version?: string;
  held_vendors: string[];
  held_models: string[];
}

function capabilitiesMessage(
  body: CapabilitiesBody | undefined,
): MessageInitShape<typeof DeviceCapabilitiesSchema> | undefined {
  if (!body) return undefined;
  return {
    toolsCount: body.tools_count,
    hubPort: body.hub_port,
    helperVersion: body.helper_version,
    heldVendors: body.held_vendors,
    heldModels: body.held_models,
  };
}

function renderCapabilities(capabilities: DeviceCapabilities): Record<string, unknown> {
  return {
    tools_count: capabilities.toolsCount,
    ...(capabilities.hubPort !== undefined ? { hub_port: capabilities.hubPort } : {}),
    ...(capabilities.helperVersion !== undefined ? { helper_version: capabilities.helperVersion } : {}),
    held_vendors: capabilities.heldVendors,
    held_models: capabilities.heldModels,
  };
}

/** What a device declared, as an approver sees it before the device exists. */
function renderDeclaration(
  device: Pick<DeviceDeclaration, 'kind' | 'label' | 'fingerprint' | 'capabilities' | 'agent'> | undefined,
): Record<string, unknown> {
  if (!device) return {};
  return {
    kind: device.kind,
    label: device.label,
    fingerprint: device.fingerprint,
    ...(device.capabilities ? { capabilities: renderCapabilities(device.capabilities) } : {}),
    ...(device.agent ? { agent: { agent_vendor: device.agent.agentVendor, tier: device.agent.tier } } : {}),
  };
}

const iso = (value: Timestamp | undefined) => (value ? timestampDate(value).toISOString() : null);

/** The spec's Device resource. */
function renderDevice(device: Device): Record<string, unknown> {
  return {
    id: device.id,
    object: 'device',
    ...renderDeclaration(device),
    created_at: iso(device.createdAt),
    last_seen_at: iso(device.lastSeenAt),
    online: device.online,
  };
}

/**
 * Device pairing (RFC 8628) and the paired-device list. Device codes and device tokens are drawn here and
 * only their SHA-256 goes to the account service; neither is ever logged.
 */
export function deviceRoutes(deps: DeviceRoutesDeps): Router {
  const router = Router();
  const verificationUri = `${deps.baseUrl.replace(/\/+$/, '')}/device`;

  mount(router, specs.startDevicePairing, deps.authorize, async ({ body, req, requestId }) => {
    await deps.throttle.pairing(deps.throttle.addressOf(req));
    const deviceCode = randomBytes(32).toString('base64url');
    const device = {
      kind: body.kind,
      label: body.label,
      fingerprint: body.fingerprint,
      capabilities: capabilitiesMessage(body.capabilities),
      agent: body.agent && { agentVendor: body.agent.agent_vendor, tier: body.agent.tier },
    };
    const reply = await deps.devices.startDevicePairing(
      { deviceCodeSha256: hashSecret(deviceCode), device },
      { requestId },
    );
    return {
      status: 200,
      body: {
        device_code: deviceCode,
        user_code: reply.userCode,
        verification_uri: verificationUri,
        verification_uri_complete: `${verificationUri}?user_code=${encodeURIComponent(reply.userCode)}`,
        expires_in: reply.expiresInS,
        interval: reply.intervalS,
      },
    };
  });

  mount(router, specs.approveDevicePairing, deps.authorize, async ({ body, principal, rpc }) => {
    const reply = await deps.devices.approveDevicePairing({ userId: principal.userId, userCode: body.user_code }, rpc);
    return {
      status: 200,
      body: { ok: true, status: 'approved', user_code: reply.userCode, device: renderDeclaration(reply.device) },
    };
  });

  mount(router, specs.denyDevicePairing, deps.authorize, async ({ body, principal, rpc }) => {
    const reply = await deps.devices.denyDevicePairing({ userId: principal.userId, userCode: body.user_code }, rpc);
    return {
      status: 200,
      body: { ok: true, status: 'denied', user_code: reply.userCode, device: renderDeclaration(reply.device) },
    };
  });

  mount(router, specs.exchangeDeviceCode, deps.authorize, async ({ body, requestId }) => {
    // Drawn for every poll but stored (as its hash) only by the one that is handed the device.
    const deviceToken = newSecret('sbd');
    const reply = await deps.devices.exchangeDeviceCode(
      { deviceCodeSha256: hashSecret(body.device_code), deviceTokenSha256: hashSecret(deviceToken) },
      { requestId },
    );
    return { status: 200, body: { device_token: deviceToken, device: renderDevice(reply.device!) } };
  });

  mount(router, specs.recordDeviceHeartbeat, deps.authorize, async ({ body, principal, requestId }) => {
    if (principal.kind !== 'device' || !principal.deviceId) {
      throw new ApiError(
        'insufficient_scope',
        'Only a paired device sends heartbeats, with its own device token (sbd_…).',
        { extra: { required_scopes: [] } },
      );
    }
    await deps.devices.recordDeviceHeartbeat(
      { userId: principal.userId, deviceId: principal.deviceId, capabilities: capabilitiesMessage(body.capabilities) },
      { requestId },
    );
    return { status: 204 };
  });

  mount(router, specs.listDevices, deps.authorize, async ({ query, principal, requestId }) => {
    const reply = await deps.devices.listDevices(
      { userId: principal.userId, limit: query.limit, afterId: query.after_id, beforeId: query.before_id },
      { requestId },
    );
    return {
      status: 200,
      body: mapPage(
        listEnvelope(reply.devices, reply.hasMore, (device) => device.id),
        renderDevice,
      ),
    };
  });

  mount(router, specs.getDevice, deps.authorize, async ({ params, principal, requestId }) => {
    const reply = await deps.devices.getDevice({ userId: principal.userId, deviceId: params.device_id }, { requestId });
    return { status: 200, body: renderDevice(reply.device!) };
  });

  mount(router, specs.renameDevice, deps.authorize, async ({ params, body, principal, rpc }) => {
    const reply = await deps.devices.renameDevice(
      { userId: principal.userId, deviceId: params.device_id, label: body.label },
      rpc,
    );
    return { status: 200, body: renderDevice(reply.device!) };
  });

  mount(router, specs.unlinkDevice, deps.authorize, async ({ params, principal, rpc }) => {
    const reply = await deps.devices.unlinkDevice({ userId: principal.userId, deviceId: params.device_id }, rpc);
    return { status: 200, body: { id: reply.deviceId, object: 'device', deleted: true } };
  });

  return router;
}
