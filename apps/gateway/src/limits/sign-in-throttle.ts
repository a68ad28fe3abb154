import { createHash } from 'node:crypto';
import type { SharedStore } from '@sbc/cache';
import { ApiError } from '@sbc/errors';

/**
 * Throttles for the routes a caller reaches without a key (docs/account-surface.md, "Throttles without a
 * key"), kept in the shared store so every edge replica counts together:
 * - failed sign-ins, per account and address (5 per 15 minutes) and per address across accounts (30 per
 *   15 minutes), so guessing is slow from any one place;
 * - failed sign-ins per account from addresses that never signed in to it (100 per hour), so many places
 *   together are slow too. An address where the account's owner signed in within 30 days is exempt from
 *   that one, so an attacker elsewhere cannot lock the owner out;
 * - sign-ups and device pairings per address (20 and 100 per hour).
 * Per-address windows skip loopback peers (see isLoopback).
 * Only failures count against the sign-in windows; a refusal answers 429 `rate_limited` with Retry-After.
 */

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const KNOWN_ADDRESS_MS = 30 * 24 * HOUR_MS;

export const THROTTLES = {
  signInPerAccountAddress: { limit: 5, windowMs: 15 * MINUTE_MS },
  signInPerAddress: { limit: 30, windowMs: 15 * MINUTE_MS },
  signInPerAccountFromNewAddresses: { limit: 100, windowMs: HOUR_MS },
  signUpPerAddress: { limit: 20, windowMs: HOUR_MS },
  pairingPerAddress: { limit: 100, windowMs: HOUR_MS },
} as const;

type Window = { limit: number; windowMs: number };

/** Store keys name an account by a hash of its address, so no e-mail sits in Redis. */
function accountTag(email: string): string {
  return createHash('sha256').update(email.trim().toLowerCase()).digest('base64url').slice(0, 22);
}

function refusal(retryAfterMs: number, message: string): ApiError {
  return new ApiError('rate_limited', message, {
    headers: { 'retry-after': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) },
  });
}

/**
 * The caller's address: the socket's peer, or with `trustedProxyHops` proxies in front, the entry that many
 * hops from the end of `x-forwarded-for` (entries before it are the caller's own claims).
 */
export function clientAddress(
  req: { socket: { remoteAddress?: string }; headers: Record<string, string | string[] | undefined> },
  trustedProxyHops: number,
): string {
  const peer = req.socket.remoteAddress ?? 'unknown';
  if (trustedProxyHops === 0) return peer;
  const header = req.headers['x-forwarded-for'];
  const hops = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  return hops.length >= trustedProxyHops ? hops[hops.length - trustedProxyHops]! : peer;
}

/**
 * A loopback peer is the machine itself: a local tool, or a proxy in front of the edge that was not declared
 * with TRUSTED_PROXY_HOPS. Windows kept per address alone would then throttle every caller together, so
 * loopback is counted per account only.
 */
function isLoopback(address: string): boolean {
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}

export function createSignInThrottle(deps: { store: SharedStore; trustedProxyHops?: number }) {
  const { store } = deps;

  /** Reads a window without counting; the first that is full refuses. */
  async function checkAll(windows: Array<[string, Window]>, message: string): Promise<void> {
    const results = await Promise.all(
      windows.map(([key, window]) => store.slidingWindowHit(key, { ...window, cost: 0 })),
    );
    const full = results.filter((result) => result.remaining <= 0);
    if (full.length > 0) throw refusal(Math.max(...full.map((result) => result.resetMs)), message);
  }

  async function hitOrRefuse(key: string, window: Window, message: string): Promise<void> {
    const result = await store.slidingWindowHit(key, window);
    if (!result.allowed) throw refusal(result.retryAfterMs, message);
  }

  function signInWindows(email: string, address: string, known: boolean): Array<[string, Window]> {
    const account = accountTag(email);
    const windows: Array<[string, Window]> = [[`signin:fail:${account}:${address}`, THROTTLES.signInPerAccountAddress]];
    if (!isLoopback(address)) windows.push([`signin:fail:addr:${address}`, THROTTLES.signInPerAddress]);
    if (!known) windows.push([`signin:fail:${account}`, THROTTLES.signInPerAccountFromNewAddresses]);
    return windows;
  }

  const isKnown = async (email: string, address: string) =>
    (await store.get(`signin:known:${accountTag(email)}:${address}`)) !== null;

  return {
    addressOf: (req: Parameters<typeof clientAddress>[0]) => clientAddress(req, deps.trustedProxyHops ?? 0),

    /**
     * Runs one sign-in attempt under the throttles: refused at once while a window is full, counted when
     * `attempt` fails with 401, remembered as a known address when it succeeds.
     */
    async signIn<T>(email: string, address: string, attempt: () => Promise<T>): Promise<T> {
      const known = await isKnown(email, address);
      const windows = signInWindows(email, address, known);
      await checkAll(windows, 'Too many failed sign-ins; try again later.');
      try {
        const result = await attempt();
        await store.set(`signin:known:${accountTag(email)}:${address}`, '1', KNOWN_ADDRESS_MS);
        return result;
      } catch (error) {
        if (error instanceof ApiError && error.code === 'unauthorized') {
          await Promise.all(windows.map(([key, window]) => store.slidingWindowHit(key, window)));
        }
        throw error;
      }
    },

    async signUp(address: string): Promise<void> {
      if (isLoopback(address)) return;
      await hitOrRefuse(
        `signup:addr:${address}`,
        THROTTLES.signUpPerAddress,
        'Too many sign-ups from this address; try again later.',
      );
    },

    async pairing(address: string): Promise<void> {
      if (isLoopback(address)) return;
      await hitOrRefuse(
        `pair:addr:${address}`,
        THROTTLES.pairingPerAddress,
        'Too many device pairings from this address; try again later.',
      );
    },
  };
}

export type SignInThrottle = ReturnType<typeof createSignInThrottle>;
