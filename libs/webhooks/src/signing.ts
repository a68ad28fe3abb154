import { createHmac, randomBytes } from 'node:crypto';

// Standard Webhooks, as every webhook this service sends is signed: run events (apps/runs) and guardrail checks
// (the edge). A receiver verifies with any Standard Webhooks library and the endpoint's `whsec_` secret.

/**
 * Standard Webhooks signing: `v1,` + base64 HMAC-SHA256 over `${id}.${timestamp}.${body}`, keyed with the
 * base64-decoded part of the `whsec_` secret. The timestamp is Unix seconds of this attempt.
 */
function signWebhook(secret: string, id: string, timestampS: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampS}.${body}`).digest('base64')}`;
}

/** The headers of one delivery attempt. */
export function webhookHeaders(secret: string, id: string, body: string, now: Date): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    'content-type': 'application/json',
    'user-agent': 'sbc-webhooks/1',
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signWebhook(secret, id, timestamp, body),
  };
}

/** A new signing secret: `whsec_` + base64 of 32 random bytes (the HMAC key). */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}
