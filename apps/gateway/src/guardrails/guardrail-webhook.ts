import { Agent, request } from 'undici';
import type { EgressCaller, EgressPolicy } from '@sbc/egress';
import { newId } from '@sbc/ids';
import { webhookHeaders } from '@sbc/webhooks';
import type { EdgeGuardrail } from './edge-guardrails';

/** The most of a webhook's answer that is read: `{"action": …}` needs a few bytes. */
const MAX_ANSWER_BYTES = 16 * 1024;

/** What a guardrail webhook decided: its own answer, or that it failed to give one (fail open or closed decides). */
type WebhookVerdict = 'allow' | 'block' | 'failed';

export interface GuardrailWebhooks {
  check(guardrail: EdgeGuardrail, payload: Record<string, unknown>, dialAs: EgressCaller): Promise<WebhookVerdict>;
  close(): Promise<void>;
}

/**
 * The webhook guardrails' calls: the payload POSTed signed as run webhooks are (Standard Webhooks, with the
 * guardrail's `whsec_` secret), under the egress rules of custom endpoints (a caller's webhook cannot reach the
 * service's private network), no redirect followed, cut at the guardrail's timeout. Anything but a 2xx answer of
 * `{"action": "allow" | "block"}` in time is a failure.
 */
export function createGuardrailWebhooks(egress: EgressPolicy): GuardrailWebhooks {
  const agents: Record<EgressCaller, Agent> = {
    tenant: new Agent({ connect: egress.connector('tenant') }),
    operator: new Agent({ connect: egress.connector('operator') }),
  };
  return {
    async check(guardrail, payload, dialAs) {
      const webhook = guardrail.webhook!;
      const body = JSON.stringify(payload);
      const headers = webhookHeaders(webhook.secret, newId('msg'), body, new Date());
      try {
        const reply = await request(webhook.url, {
          method: 'POST',
          headers,
          body,
          dispatcher: agents[dialAs],
          signal: AbortSignal.timeout(webhook.timeout_ms),
        });
        let text = '';
        for await (const chunk of reply.body) {
          text += (chunk as Buffer).toString('utf8');
          if (text.length > MAX_ANSWER_BYTES) break;
        }
        if (reply.statusCode < 200 || reply.statusCode >= 300) return 'failed';
        const action = (JSON.parse(text) as { action?: unknown }).action;
        return action === 'allow' || action === 'block' ? action : 'failed';
      } catch {
        return 'failed';
      }
    },
    async close() {
      await Promise.all([agents.tenant.close(), agents.operator.close()]);
    },
  };
}
