import { newId } from '@sbc/ids';
import { keysetRange, toPage, type ListEnvelope, type PageQuery } from '@sbc/pagination';
import { Prisma, type PrismaClient as AccountDb } from '../generated/prisma/client';
import type { RecordChange } from './audit';
import type { Device as DeviceRow, DevicePairing as DevicePairingRow } from '../generated/prisma/client';
import {
  newUserCode,
  PAIRING_TTL_MS,
  pollOutcome,
  POLL_INTERVAL_S,
  SLOW_DOWN_STEP_S,
  type PairingStatus,
  type PollOutcome,
  formatUserCode,
} from '../devices/pairing';
import { heartbeatRecordedBefore } from '../devices/presence';

export type { DeviceRow, DevicePairingRow };

/** What a device declares when it asks to pair; capabilities and agent in the spec's JSON shape. */
export interface DeviceDeclaration {
  kind: string;
  label: string;
  fingerprint: string;
  capabilities: Prisma.InputJsonObject | null;
  agent: Prisma.InputJsonObject | null;
}

// Settled and expired grants are kept a day so a late poll still learns why (expired_token, access_denied),
// then pruned, which also frees their user codes.
const KEEP_SETTLED_GRANTS_MS = 24 * 60 * 60_000;
const USER_CODE_ATTEMPTS = 5;

function isUniqueViolation(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002';
}

function jsonColumn(
  value: Prisma.JsonValue | Prisma.InputJsonObject | null,
): Prisma.InputJsonValue | typeof Prisma.DbNull {
  return value === null ? Prisma.DbNull : (value as Prisma.InputJsonValue);
}

/** Opens a pending grant under a fresh user code (drawn again on the rare clash with a live one). */
export async function createPairing(
  db: AccountDb,
  input: { deviceCodeHash: Buffer; device: DeviceDeclaration; now: Date },
): Promise<DevicePairingRow> {
  const { now, device } = input;
  await db.devicePairing.deleteMany({ where: { expiresAt: { lt: new Date(now.getTime() - KEEP_SETTLED_GRANTS_MS) } } });
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.devicePairing.create({
        data: {
          deviceCodeHash: new Uint8Array(input.deviceCodeHash),
          userCode: newUserCode(),
          kind: device.kind,
          label: device.label,
          fingerprint: device.fingerprint,
          capabilities: jsonColumn(device.capabilities),
          agent: jsonColumn(device.agent),
          intervalS: POLL_INTERVAL_S,
          createdAt: now,
          expiresAt: new Date(now.getTime() + PAIRING_TTL_MS),
        },
      });
    } catch (error) {
      if (attempt < USER_CODE_ATTEMPTS && isUniqueViolation(error)) continue;
      throw error;
    }
  }
}

/**
 * Approves or denies a pending, unexpired grant for `userId`. Null when no such grant exists (unknown,
 * expired, or already decided), so a guessed code learns nothing about other users' grants.
 */
export async function decidePairing(
  db: AccountDb,
  input: { userCode: string; userId: string; decision: 'approved' | 'denied'; now: Date },
  record: RecordChange,
): Promise<DevicePairingRow | null> {
  return db.$transaction(async (tx) => {
    const { count } = await tx.devicePairing.updateMany({
      where: { userCode: input.userCode, status: 'pending', expiresAt: { gt: input.now } },
      data: { status: input.decision, userId: input.userId },
    });
    if (count === 0) return null;
    const grant = await tx.devicePairing.findUniqueOrThrow({ where: { userCode: input.userCode } });
    // The device gets its id when it collects its token; until then the pairing is named by its user code.
    await record(tx, {
      action: input.decision === 'approved' ? 'device.approve' : 'device.deny',
      resourceType: 'device',
      resourceId: formatUserCode(grant.userCode),
      ownerUserId: input.userId,
      after: grant,
    });
    return grant;
  });
}

/** A paired device's change as the audit log records it (its token hash never). */
function deviceChange(action: string, before: DeviceRow, after: DeviceRow | null) {
  return { action, resourceType: 'device', resourceId: before.id, ownerUserId: before.userId, before, after };
}

export type PollResult =
  { outcome: 'issue'; device: DeviceRow } | { outcome: Exclude<PollOutcome, 'issue'>; intervalS: number };

/**
 * One poll of a device with its device code. Pending polls record when they came (and stretch the interval
 * on `slow_down`); an approved grant is consumed by a conditional update in the same transaction that
 * creates the device, so of two concurrent polls exactly one gets the token.
 */
export async function pollPairing(
  db: AccountDb,
  input: { deviceCodeHash: Buffer; deviceTokenHash: Buffer; now: Date },
): Promise<PollResult> {
  const deviceCodeHash = new Uint8Array(input.deviceCodeHash);
  const grant = await db.devicePairing.findUnique({ where: { deviceCodeHash } });
  if (!grant) return { outcome: 'invalid_grant', intervalS: POLL_INTERVAL_S };
  const outcome = pollOutcome({ ...grant, status: grant.status as PairingStatus }, input.now);
  if (outcome === 'issue') return exchangeGrant(db, grant, input.deviceTokenHash, input.now);
  if (outcome !== 'authorization_pending' && outcome !== 'slow_down') return { outcome, intervalS: grant.intervalS };

  const intervalS = outcome === 'slow_down' ? grant.intervalS + SLOW_DOWN_STEP_S : grant.intervalS;
  const { count } = await db.devicePairing.updateMany({
    where: { deviceCodeHash, status: 'pending', lastPolledAt: grant.lastPolledAt },
    data: { lastPolledAt: input.now, intervalS },
  });
  // Another poll (or the approval) changed the grant since it was read: this poll came too soon after it.
  if (count === 0) return { outcome: 'slow_down', intervalS };
  return { outcome, intervalS };
}

async function exchangeGrant(
  db: AccountDb,
  grant: DevicePairingRow,
  deviceTokenHash: Buffer,
  now: Date,
): Promise<PollResult> {
  return db.$transaction(async (tx) => {
    const deviceId = newId('dev', now.getTime());
    const { count } = await tx.devicePairing.updateMany({
      where: { deviceCodeHash: grant.deviceCodeHash, status: 'approved' },
      data: { status: 'consumed', deviceId },
    });
    if (count === 0) return { outcome: 'invalid_grant', intervalS: grant.intervalS } as const;
    const device = await tx.device.create({
      data: {
        id: deviceId,
        userId: grant.userId!,
        kind: grant.kind,
        label: grant.label,
        fingerprint: grant.fingerprint,
        capabilities: jsonColumn(grant.capabilities),
        agent: jsonColumn(grant.agent),
        tokenHash: new Uint8Array(deviceTokenHash),
        createdAt: now,
      },
    });
    return { outcome: 'issue', device } as const;
  });
}

/** The user's devices, newest first. */
export async function listDevices(db: AccountDb, userId: string, query: PageQuery): Promise<ListEnvelope<DeviceRow>> {
  const range = keysetRange(query);
  const rows = await db.device.findMany({
    where: { userId, ...(range.cursor ? { id: range.cursor } : {}) },
    orderBy: { id: range.order },
    take: range.take,
  });
  return toPage(rows, query, (row) => row.id);
}

/** One of the user's devices; another account's device is indistinguishable from a missing one. */
export function findDevice(db: AccountDb, userId: string, deviceId: string): Promise<DeviceRow | null> {
  return db.device.findFirst({ where: { id: deviceId, userId } });
}

export async function renameDevice(
  db: AccountDb,
  userId: string,
  deviceId: string,
  label: string,
  record: RecordChange,
): Promise<DeviceRow | null> {
  return db.$transaction(async (tx) => {
    const before = await tx.device.findFirst({ where: { id: deviceId, userId } });
    const { count } = await tx.device.updateMany({ where: { id: deviceId, userId }, data: { label } });
    if (!before || count === 0) return null;
    const after = await tx.device.findUniqueOrThrow({ where: { id: deviceId } });
    await record(tx, deviceChange('device.rename', before, after));
    return after;
  });
}

/** Removes one of the user's devices; returns it (with its token hash, to revoke at the edges) or null. */
export async function deleteDevice(
  db: AccountDb,
  userId: string,
  deviceId: string,
  record: RecordChange,
): Promise<DeviceRow | null> {
  return db.$transaction(async (tx) => {
    const device = await tx.device.findFirst({ where: { id: deviceId, userId } });
    if (!device) return null;
    const { count } = await tx.device.deleteMany({ where: { id: deviceId, userId } });
    if (count === 0) return null;
    await record(tx, deviceChange('device.unlink', device, null));
    return device;
  });
}

/**
 * Records a heartbeat with one conditional update that matches only when the recorded one is older than
 * the record window, so a device costs at most one write per window however often it beats. Capabilities
 * sent with the heartbeat ride along on that write. False when nothing was written.
 */
export async function recordHeartbeat(
  db: AccountDb,
  input: { userId: string; deviceId: string; capabilities: Prisma.InputJsonObject | null; now: Date },
): Promise<boolean> {
  const { count } = await db.device.updateMany({
    where: {
      id: input.deviceId,
      userId: input.userId,
      OR: [{ lastSeenAt: null }, { lastSeenAt: { lt: heartbeatRecordedBefore(input.now) } }],
    },
    data: { lastSeenAt: input.now, ...(input.capabilities ? { capabilities: input.capabilities } : {}) },
  });
  return count > 0;
}
