import { parseUpstreamError, refusedBetas } from '@sbc/dialects';
import { withBetas, type BetaRefusals, type BetaSending, type BetaTarget } from './beta-refusals';
import type { UpstreamCall } from './client';

/** The request answered: its call at its head, and the error body already read when a refusal was looked at. */
export interface BetaSent {
  reply: UpstreamCall;
  /** A 400's body, read to see whether it refused a beta value (it did not, or it could not be re-sent). */
  errorBody?: unknown;
}

export interface BetaSendHooks {
  /** The request now in flight (a caller hanging up aborts it). */
  current(call: UpstreamCall): void;
  /** Whether the request may be sent again (the call has an attempt left, and its caller is still there). */
  mayResend(): boolean;
  /** Called just before the re-send: it is another attempt. */
  resending(): void;
  requestId?: string;
}

/**
 * Sends a request carrying the caller's beta values to an Anthropic-dialect target and waits for its head. A 400
 * that refuses some of those values is remembered (later calls leave them out up front) and, when the hooks
 * allow, sent again at once without them: nothing has reached the caller yet, so it sees only that answer.
 */
export async function sendWithBetas(
  send: (passHeaders: Record<string, string>) => UpstreamCall,
  sending: BetaSending,
  memory: BetaRefusals,
  target: BetaTarget,
  hooks: BetaSendHooks,
): Promise<BetaSent> {
  const first = send(sending.passHeaders);
  hooks.current(first);
  await first.head;
  if (first.status !== 400 || sending.values.length === 0) return { reply: first };
  const errorBody = await first.json();
  const refused = refusedBetas(parseUpstreamError(400, errorBody).message, sending.values);
  if (refused.length === 0) return { reply: first, errorBody };
  const resend = hooks.mayResend();
  memory.remember(target, refused, hooks.requestId, resend);
  if (!resend) return { reply: first, errorBody };
  hooks.resending();
  const kept = sending.values.filter((value) => !refused.includes(value));
  const second = send(withBetas(sending.passHeaders, kept));
  hooks.current(second);
  await second.head;
  return { reply: second };
}
