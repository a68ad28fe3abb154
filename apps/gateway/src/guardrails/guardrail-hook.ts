import type { ChatRequest, ChatResponse, StreamEvent, UpstreamFailure } from '@sbc/dialects';
import { ApiError } from '@sbc/errors';
import { WindowScanner, type TextVerdict } from '@sbc/guardrails';
import type { Logger } from '@sbc/logging';
import { Counter, type Registry } from '@sbc/metrics';
import {
  neutralRequestOf,
  rewriteRequest,
  type CallHook,
  type EventFilter,
  type HookedCall,
  type HookPart,
  type UsageMark,
} from '../model-calls/call-hooks';
import { bodyOf } from '../model-calls/plan';
import { mapReplyTexts, mapRequestTexts, textsOf } from './call-texts';
import type { EdgeGuardrail, PrincipalGuardrails } from './edge-guardrails';
import type { GuardrailJudge } from './guardrail-judge';
import type { GuardrailWebhooks } from './guardrail-webhook';

/** The request header that adds guardrails to one call (comma-separated ids); nothing a header says removes one. */
const GUARDRAILS_HEADER = 'x-sbc-guardrails';

const ACTION_RANK = { log: 1, redact: 2, block: 3 } as const;
type Action = keyof typeof ACTION_RANK;

export interface GuardrailHookDeps {
  webhooks: GuardrailWebhooks;
  judge: GuardrailJudge;
  logger: Logger;
  registry: Registry;
}

/** The refusal of a blocked call: 400 `guardrail_blocked`, naming the guardrail and its kind, never what matched. */
function guardrailBlocked(guardrail: EdgeGuardrail, detail = ''): ApiError {
  return new ApiError(
    'guardrail_blocked',
    `Guardrail "${guardrail.name}" (${guardrail.kind}) blocked this call${detail}.`,
    {
      // The code too, for the dialects whose error shape has no `code` of its own (Anthropic's).
      extra: { code: 'guardrail_blocked', guardrail: { id: guardrail.id, name: guardrail.name, kind: guardrail.kind } },
    },
  );
}

/**
 * The guardrails the call passes through: those attached to its key and team, then any its header adds (ids of the
 * account's or the team's guardrails). A header can only add: a token that is not a known id and reads as a removal
 * (`-grd_…`, `none`, empty) is ignored; an unknown id is the caller's 400, so a typo never passes silently.
 */
function activeGuardrails(
  set: PrincipalGuardrails | undefined,
  header: string | string[] | undefined,
): EdgeGuardrail[] {
  const active = [...(set?.attached ?? [])];
  if (header === undefined) return active;
  for (const token of (Array.isArray(header) ? header.join(',') : header).split(',').map((part) => part.trim())) {
    if (!token.startsWith('grd_')) continue;
    const added = set?.byId.get(token);
    if (!added)
      throw ApiError.invalid([
        {
          path: GUARDRAILS_HEADER,
          code: 'invalid_value',
          message: `${GUARDRAILS_HEADER} names no guardrail ${token}.`,
        },
      ]);
    if (!active.includes(added)) active.push(added);
  }
  return active;
}

/**
 * Guardrails, a hook on the call path (call-hooks.ts). A call of a key with no guardrail, and no header adding one,
 * takes no part. Counted per guardrail and action in `sbc_guardrail_actions_total`.
 */
export function createGuardrailHook(deps: GuardrailHookDeps): CallHook {
  const actions = new Counter({
    name: 'sbc_guardrail_actions_total',
    help: 'Guardrail actions taken on model calls, by guardrail id and action (block, redact, log).',
    labelNames: ['guardrail', 'action'],
    registers: [deps.registry],
  });
  return {
    partIn({ principal, headers, out }: HookedCall) {
      const set = principal.guardrails;
      const header = headers[GUARDRAILS_HEADER];
      if (!set?.attached.length && header === undefined) return undefined;
      const active = activeGuardrails(set, header);
      if (active.length === 0) return undefined;
      const count = (id: string, action: Action) => actions.inc({ guardrail: id, action });
      return new GuardrailCall({ ...deps, count }, active, { principal, requestId: out.requestId });
    },
  };
}

/** The guarded call's caller: whose webhooks are dialled under its egress rules, and whose judge calls are billed. */
interface Caller {
  principal: HookedCall['principal'];
  requestId: string;
}

class GuardrailCall implements HookPart {
  private strongest?: { guardrail: EdgeGuardrail; action: Action };
  /** The request as sent on, for the reply side's webhooks and judges. */
  private request?: ChatRequest;

  constructor(
    private readonly deps: GuardrailHookDeps & { count: (id: string, action: Action) => void },
    private readonly active: readonly EdgeGuardrail[],
    private readonly caller: Caller,
  ) {}

  async before({ call }: HookedCall): Promise<undefined> {
    const checking = this.active.filter((guardrail) => guardrail.request);
    if (call.adapter.modelKind === 'embedding') {
      if (checking.length > 0) this.checkEmbeddingInput(checking, bodyOf(call));
      return undefined;
    }
    // A reply-side webhook or judge is shown the request too.
    const asked = this.active.some((guardrail) => guardrail.reply && !guardrail.detectors);
    if (checking.length === 0) {
      if (asked) this.request = neutralRequestOf(call);
      return undefined;
    }
    let request = neutralRequestOf(call);
    let rewritten = false;
    for (const guardrail of checking) {
      if (guardrail.detectors) {
        const detectors = guardrail.detectors;
        const mapped = mapRequestTexts(request, (text) => this.applied(guardrail, detectors.apply(text)));
        if (this.changed) {
          request = mapped;
          rewritten = true;
          this.changed = false;
        }
      } else await this.consult(guardrail, request);
    }
    if (rewritten) rewriteRequest(call, request);
    this.request = request;
    return undefined;
  }

  async reply(reply: ChatResponse): Promise<ChatResponse | undefined> {
    let current = reply;
    let rewritten = false;
    for (const guardrail of this.active) {
      if (!guardrail.reply) continue;
      if (guardrail.detectors) {
        const detectors = guardrail.detectors;
        const mapped = mapReplyTexts(current, (text) => this.applied(guardrail, detectors.apply(text)));
        if (this.changed) {
          current = mapped;
          rewritten = true;
          this.changed = false;
        }
      } else await this.consult(guardrail, this.request, current);
    }
    return rewritten ? current : undefined;
  }

  stream(): EventFilter | undefined {
    const checking = this.active.filter((guardrail) => guardrail.reply && guardrail.detectors);
    return checking.length === 0 ? undefined : new GuardedStream(checking, this);
  }

  mark(): UsageMark | undefined {
    const strongest = this.strongest;
    return strongest && { guardrailId: strongest.guardrail.id, guardrailAction: strongest.action };
  }

  /** A redaction was made by the last `applied` call. */
  private changed = false;

  /** A text's verdict taken: a block refuses, a redaction is noted, a log is noted; the text to carry on with. */
  applied(guardrail: EdgeGuardrail, verdict: TextVerdict): string {
    if (verdict.block) {
      this.note(guardrail, 'block');
      throw guardrailBlocked(guardrail);
    }
    if (verdict.redactions.length > 0) {
      this.note(guardrail, 'redact');
      this.changed = true;
    }
    if (verdict.logs.length > 0) this.note(guardrail, 'log');
    return verdict.text;
  }

  note(guardrail: EdgeGuardrail, action: Action): void {
    this.deps.count(guardrail.id, action);
    if (!this.strongest || ACTION_RANK[action] > ACTION_RANK[this.strongest.action])
      this.strongest = { guardrail, action };
  }

  /**
   * Asks a webhook or judge guardrail about the request, or about the request and its reply; one the edge cannot
   * apply (settings it cannot read) blocks: no policy is skipped.
   */
  private async consult(guardrail: EdgeGuardrail, request: ChatRequest | undefined, reply?: ChatResponse) {
    const { principal, requestId } = this.caller;
    const settings = guardrail.webhook ?? guardrail.judge;
    if (!settings) {
      this.note(guardrail, 'block');
      throw guardrailBlocked(guardrail, ': it could not be applied');
    }
    let verdict: 'allow' | 'block' | 'failed' | 'oversize';
    if (guardrail.webhook) {
      const payload = reply ? { type: 'reply', request, reply } : { type: 'request', request };
      const body = { guardrail: { id: guardrail.id, name: guardrail.name }, request_id: requestId, ...payload };
      verdict = await this.deps.webhooks.check(guardrail, body, principal.operator ? 'operator' : 'tenant');
    } else {
      const texts = {
        request: request ? textsOf((map) => mapRequestTexts(request, map)) : [],
        ...(reply ? { reply: textsOf((map) => mapReplyTexts(reply, map)) } : {}),
      };
      verdict = await this.deps.judge.ask(guardrail, texts, this.caller);
    }
    if (verdict === 'allow') return;
    if (verdict !== 'block') {
      const failure =
        verdict === 'oversize' ? 'the call is too long for its judge' : `its ${guardrail.kind} did not answer`;
      if (settings.fail === 'open') {
        this.note(guardrail, 'log');
        this.deps.logger.warn(
          { requestId, guardrail: guardrail.id },
          `guardrail: ${failure}; the call went on (fail open)`,
        );
        return;
      }
      this.note(guardrail, 'block');
      throw guardrailBlocked(guardrail, `: ${failure}`);
    }
    this.note(guardrail, 'block');
    throw guardrailBlocked(guardrail);
  }

  private checkEmbeddingInput(checking: readonly EdgeGuardrail[], body: Record<string, unknown>): void {
    for (const guardrail of checking) {
      if (!guardrail.detectors) {
        this.note(guardrail, 'block');
        throw guardrailBlocked(guardrail, ': it does not check embeddings');
      }
      const detectors = guardrail.detectors;
      const map = (text: unknown) => (typeof text === 'string' ? this.applied(guardrail, detectors.apply(text)) : text);
      body.input = Array.isArray(body.input) ? body.input.map(map) : map(body.input);
    }
  }
}

/**
 * A streamed reply through the reply-side detector guardrails: each text channel (the reply's text, its refusal,
 * each tool call's arguments) goes through a sliding window (libs/guardrails stream-window.ts), so a redaction
 * holds back at most the window and a block ends the stream before the match reaches the caller.
 */
class GuardedStream implements EventFilter {
  readonly rewrites = true;
  private readonly scanners = new Map<string, WindowScanner>();
  /** The channel text is flowing on: switching channels releases what the last one held first. */
  private channel?: { key: string; event: (text: string) => StreamEvent };

  constructor(
    private readonly guardrails: readonly EdgeGuardrail[],
    private readonly call: GuardrailCall,
  ) {}

  push(event: StreamEvent): readonly StreamEvent[] | undefined {
    const channel = channelOf(event);
    if (!channel) {
      // Any other event comes after the text before it: what is held goes first (all of it, at the end).
      const released = this.release();
      if ('error' in released) return [released.error];
      return released.events.length === 0 ? undefined : [...released.events, event];
    }
    const out: StreamEvent[] = [];
    if (this.channel && this.channel.key !== channel.key) {
      const released = this.release();
      if ('error' in released) return [released.error];
      out.push(...released.events);
    }
    this.channel = channel;
    const scanner = this.scannerOf(channel.key);
    const verdict = this.verdict(scanner.push(channel.text));
    if ('error' in verdict) return [verdict.error];
    if (verdict.text !== '') out.push(channel.event(verdict.text));
    return out;
  }

  private scannerOf(key: string): WindowScanner {
    let scanner = this.scanners.get(key);
    if (!scanner) {
      scanner = new WindowScanner((text) =>
        this.guardrails.flatMap((guardrail, owner) => guardrail.detectors!.findings(text, owner)),
      );
      this.scanners.set(key, scanner);
    }
    return scanner;
  }

  /** Flushes the channel text was flowing on. */
  private release(): { events: StreamEvent[] } | { error: StreamEvent } {
    const channel = this.channel;
    this.channel = undefined;
    if (!channel) return { events: [] };
    const verdict = this.verdict(this.scannerOf(channel.key).flush());
    if ('error' in verdict) return verdict;
    return { events: verdict.text === '' ? [] : [channel.event(verdict.text)] };
  }

  private verdict(verdict: TextVerdict): { text: string } | { error: StreamEvent } {
    const owner = (index: number | undefined) => this.guardrails[index ?? 0]!;
    if (verdict.block) {
      const guardrail = owner(verdict.block.owner);
      this.call.note(guardrail, 'block');
      const refusal = guardrailBlocked(guardrail);
      const failure: UpstreamFailure = { status: refusal.status, message: refusal.message, code: refusal.code };
      return { error: { type: 'error', error: failure } };
    }
    for (const finding of verdict.redactions) this.call.note(owner(finding.owner), 'redact');
    for (const finding of verdict.logs) this.call.note(owner(finding.owner), 'log');
    return { text: verdict.text };
  }
}

/** The text channel an event carries text on, and how to make an event of it again. */
function channelOf(
  event: StreamEvent,
): { key: string; text: string; event: (text: string) => StreamEvent } | undefined {
  switch (event.type) {
    case 'text':
    case 'refusal':
    case 'reasoning':
      return { key: event.type, text: event.text, event: (text) => ({ type: event.type, text }) };
    case 'tool_arguments':
      return {
        key: `tool:${event.index}`,
        text: event.delta,
        event: (delta) => ({ type: 'tool_arguments', index: event.index, delta }),
      };
    default:
      return undefined;
  }
}
