import type { AssistantBlock, ChatRequest, Message } from '@sbc/dialects';

// Prompt and completion content as the GenAI semantic conventions record it (`gen_ai.input.messages`,
// `gen_ai.output.messages`: JSON lists of `{role, parts}`), recorded only when the operator turns it on
// (OTEL_GENAI_CAPTURE_CONTENT), and then with every secret we can recognise replaced.

const REDACTED = '[redacted]';

/** Names whose assigned value is a secret (`api_key=…`, `"password": "…"`). */
const ASSIGNED_SECRETS = 'api[_-]?key|x-api-key|secret|password|passwd|token|access[_-]?token|client[_-]?secret';

/**
 * Secrets a prompt or a reply may carry: this service's own credentials (`sbc_` keys, `sbs_` sessions, `sbd_`
 * device tokens, `whsec_` webhook secrets), vendors' API keys (OpenAI and Anthropic `sk-…`, AWS, Google,
 * GitHub, Slack), bearer tokens and JWTs, PEM private keys, and the value of any `api_key=…` / `"password": …`
 * style assignment.
 */
const SECRET_PATTERNS: ReadonlyArray<[RegExp, string]> = [
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g, REDACTED],
  [/\b(?:sbc|sbs|sbd)_[A-Za-z0-9_-]{8,}/g, REDACTED],
  [/\bwhsec_[A-Za-z0-9+/=_-]{8,}/g, REDACTED],
  [/\bsk-[A-Za-z0-9_-]{8,}/g, REDACTED],
  [/\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, REDACTED],
  [/\bAIza[0-9A-Za-z_-]{30,}/g, REDACTED],
  [/\bgh[pousr]_[A-Za-z0-9]{20,}/g, REDACTED],
  [/\bxox[abprs]-[A-Za-z0-9-]{10,}/g, REDACTED],
  [/\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g, REDACTED],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi, `$1 ${REDACTED}`],
  [new RegExp(`\\b((?:${ASSIGNED_SECRETS})["']?\\s*[:=]\\s*["']?)[^\\s"',;}]{4,}`, 'gi'), `$1${REDACTED}`],
];

/** The text with every secret it recognisably holds replaced by `[redacted]`. */
export function redactSecrets(text: string): string {
  let redacted = text;
  for (const [pattern, replacement] of SECRET_PATTERNS) redacted = redacted.replace(pattern, replacement);
  return redacted;
}

/** Characters kept of one part (a long document pasted into a prompt is cut, and says so). */
export const MAX_PART_CHARS = 16_384;

function captured(text: string): string {
  const cut = text.length > MAX_PART_CHARS ? `${text.slice(0, MAX_PART_CHARS)}…[truncated]` : text;
  return redactSecrets(cut);
}

type Part =
  | { type: 'text'; content: string }
  | { type: 'reasoning'; content: string }
  | { type: 'tool_call'; id: string; name: string; arguments: string }
  | { type: 'tool_call_response'; id: string; response: string }
  // Images and documents are named, never copied: their bytes are no use in a trace.
  | { type: 'image' | 'document' };

function partsOf(blocks: Message['content']): Part[] {
  const parts: Part[] = [];
  for (const block of blocks) {
    switch (block.type) {
      case 'text':
      case 'refusal':
        parts.push({ type: 'text', content: captured(block.text) });
        break;
      case 'reasoning':
        if (block.text) parts.push({ type: 'reasoning', content: captured(block.text) });
        break;
      case 'tool_call':
        parts.push({ type: 'tool_call', id: block.id, name: block.name, arguments: captured(block.arguments) });
        break;
      case 'tool_result': {
        const text = block.content.map((item) => (item.type === 'text' ? item.text : `[${item.type}]`)).join('\n');
        parts.push({ type: 'tool_call_response', id: block.callId, response: captured(text) });
        break;
      }
      case 'image':
      case 'document':
        parts.push({ type: block.type });
        break;
    }
  }
  return parts;
}

/** `gen_ai.input.messages`: the prompt's turns in order, system turns included. */
export function inputMessages(request: ChatRequest): string {
  return JSON.stringify(request.messages.map((message) => ({ role: message.role, parts: partsOf(message.content) })));
}

/** `gen_ai.output.messages`: the one reply, with why it stopped. */
export function outputMessages(blocks: AssistantBlock[], finishReason: string | undefined): string {
  return JSON.stringify([{ role: 'assistant', parts: partsOf(blocks), finish_reason: finishReason ?? 'error' }]);
}
