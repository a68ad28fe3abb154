import { randomInt } from 'node:crypto';

/**
 * The pure rules of device pairing (RFC 8628): the user code a person types, and what one poll of the
 * device answers given the state of its grant.
 */

/** How long a grant waits for approval (RFC 8628 `expires_in`). */
export const PAIRING_TTL_MS = 10 * 60_000;
/** The first polling interval, in seconds (RFC 8628 `interval`). */
export const POLL_INTERVAL_S = 5;
/** What each `slow_down` adds to the interval (RFC 8628 §3.5). */
export const SLOW_DOWN_STEP_S = 5;

// RFC 8628 §6.1: consonants only, so a code can be read aloud, is case-insensitive, and never spells a
// word; 20^8 ≈ 2.6·10^10 codes against at most a few thousand live at once.
const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
const USER_CODE_LENGTH = 8;
const USER_CODE_PATTERN = new RegExp(`^[${USER_CODE_ALPHABET}]{${USER_CODE_LENGTH}}$`);

/** A fresh user code in its stored form: eight characters, no dash. */
export function newUserCode(): string {
  let code = '';
  for (let i = 0; i < USER_CODE_LENGTH; i++) code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return code;
}

/** How a user code is shown: `XXXX-XXXX`. */
export function formatUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/** A typed user code in its stored form (any case, dashes and spaces ignored), or null if it cannot be one. */
export function normaliseUserCode(typed: string): string | null {
  const code = typed.replace(/[\s-]/g, '').toUpperCase();
  return USER_CODE_PATTERN.test(code) ? code : null;
}

export type PairingStatus = 'pending' | 'approved' | 'denied' | 'consumed';

export interface GrantState {
  status: PairingStatus;
  expiresAt: Date;
  lastPolledAt: Date | null;
  intervalS: number;
}

/** What one poll answers: the token (`issue`) or one of the RFC 8628 / RFC 6749 error codes. */
export type PollOutcome =
  'issue' | 'authorization_pending' | 'slow_down' | 'expired_token' | 'access_denied' | 'invalid_grant';

/**
 * The answer to a poll. A code is exchanged once (then `invalid_grant`); a denial outlives expiry so the
 * device learns why; `slow_down` is the RFC's variant of "still pending", so an approved grant is handed
 * over however soon the device asks.
 */
export function pollOutcome(grant: GrantState, now: Date): PollOutcome {
  if (grant.status === 'consumed') return 'invalid_grant';
  if (grant.status === 'denied') return 'access_denied';
  if (grant.expiresAt <= now) return 'expired_token';
  if (grant.status === 'approved') return 'issue';
  if (grant.lastPolledAt && now.getTime() - grant.lastPolledAt.getTime() < grant.intervalS * 1000) return 'slow_down';
  return 'authorization_pending';
}
