import type { Metadata } from '@grpc/grpc-js';

/**
 * Who made a change, as the edge knows it: the signed-in user, the caller key or session they used, and their
 * address. It travels with the call in metadata so that a service records it beside the change (the audit log)
 * without every request message growing the same fields.
 */
export interface Actor {
  userId: string;
  /** The caller key used, when the credential was one. */
  keyId?: string;
  /** A handle of the session used (never its token), when the credential was one. */
  session?: string;
  /** The paired device, when the credential was its token. */
  deviceId?: string;
  /** The caller's address as the edge resolved it (TRUSTED_PROXY_HOPS). */
  ip?: string;
}

const KEYS = {
  userId: 'x-sbc-actor-user',
  keyId: 'x-sbc-actor-key',
  session: 'x-sbc-actor-session',
  deviceId: 'x-sbc-actor-device',
  ip: 'x-sbc-actor-ip',
} as const satisfies Record<keyof Actor, string>;

/** Values are bounded: they are stored with every record. */
const MAX_LENGTH = 128;

export function setActorMetadata(metadata: Metadata, actor: Actor): void {
  for (const [field, key] of Object.entries(KEYS)) {
    const value = actor[field as keyof Actor];
    if (value) metadata.set(key, value.slice(0, MAX_LENGTH));
  }
}

/** The actor a call carries, or undefined when it names no user (a call from outside the edge's routes). */
export function actorOfMetadata(metadata: Metadata): Actor | undefined {
  const read = (key: string) => {
    const [value] = metadata.get(key);
    return value === undefined || value === '' ? undefined : String(value).slice(0, MAX_LENGTH);
  };
  const userId = read(KEYS.userId);
  if (!userId) return undefined;
  const actor: Actor = { userId };
  for (const field of ['keyId', 'session', 'deviceId', 'ip'] as const) {
    const value = read(KEYS[field]);
    if (value) actor[field] = value;
  }
  return actor;
}
