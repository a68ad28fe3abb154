import type { ChatRequest, Dialect, UpstreamDialect } from './ir';
import type { JsonObject } from './json';
import type { ParseContext } from './parse-context';

/**
 * The one list of caller fields the gateway accepts but does not pass on, per caller dialect, with the reason.
 * The names are what the gateway reports in `x-sbc-dropped-fields` (`*` stands for any array index, `[…]`
 * narrows to items of one kind). Fields the gateway refuses instead (chat `n` > 1, `input_audio`,
 * Responses `conversation`) are validation issues, not entries here.
 *
 * Two kinds of entry:
 * - no `upstreams`: the neutral `ChatRequest` cannot carry the field, so the parser drops it;
 * - `upstreams` + `present`: the neutral form carries it, but rendering for those upstreams drops it
 *   (reported by `droppedForUpstream` once the route is known).
 */
export interface DroppedFieldSpec {
  reason: string;
  upstreams?: readonly UpstreamDialect[];
  present?: (request: ChatRequest) => boolean;
  /** A top-level field the parser inspects itself, because only some of its values are dropped. */
  manual?: boolean;
}

const BOTH: readonly UpstreamDialect[] = ['openai', 'anthropic'];

const hasMetadata = (r: ChatRequest): boolean => r.metadata !== undefined && Object.keys(r.metadata).length > 0;
const jsonMode = (r: ChatRequest): boolean => r.responseFormat?.type === 'json_object';
const strictTools = (r: ChatRequest): boolean => (r.tools ?? []).some((tool) => tool.strict !== undefined);

const metadata: DroppedFieldSpec = {
  reason:
    'OpenAI accepts chat metadata only with `store`, which the gateway never sets; Anthropic allows only `user_id`',
  upstreams: BOTH,
  present: hasMetadata,
};
const toolStrict: DroppedFieldSpec = {
  reason: 'strict tool schemas are not accepted by every Anthropic model or compatible server',
  upstreams: ['anthropic'],
  present: strictTools,
};

export const DROPPED_FIELDS = {
  chat: {
    logit_bias: { reason: 'no equivalent in Anthropic Messages; not carried' },
    logprobs: { reason: 'log probabilities are not carried through the neutral form' },
    top_logprobs: { reason: 'log probabilities are not carried through the neutral form' },
    seed: { reason: 'no equivalent in Anthropic Messages; not carried' },
    presence_penalty: { reason: 'no equivalent in Anthropic Messages; not carried' },
    frequency_penalty: { reason: 'no equivalent in Anthropic Messages; not carried' },
    modalities: { reason: 'only text output is served' },
    audio: { reason: 'only text output is served' },
    prediction: { reason: 'predicted outputs are OpenAI-only' },
    service_tier: { reason: 'the gateway chooses the upstream tier' },
    store: { reason: 'the gateway keeps no completions' },
    verbosity: { reason: 'OpenAI-only hint; not carried' },
    web_search_options: { reason: 'built-in web search is not routed through the gateway' },
    prompt_cache_key: { reason: 'OpenAI cache routing hint; not carried' },
    prompt_cache_retention: { reason: 'OpenAI cache setting; not carried' },
    prompt_cache_options: { reason: 'OpenAI cache setting; not carried' },
    moderation: { reason: 'OpenAI-only setting; not carried' },
    'stream_options.include_obfuscation': { reason: 'the gateway writes its own stream frames' },
    'messages.*.name': { reason: 'participant names have no equivalent in Anthropic Messages' },
    'messages.*.audio': { reason: 'audio replies are not served' },
    'messages.*.content.*.prompt_cache_breakpoint': { reason: 'OpenAI cache hint; not carried' },
    'tools.*[type=custom]': { reason: 'custom (free-form) tools have no Anthropic equivalent' },
    'tool_choice[type=custom]': { reason: 'custom tools are dropped, so the choice falls back to auto' },
    'tool_choice.allowed_tools.tools': { reason: 'the allowed subset is not carried; its mode (auto/required) is' },
    metadata,
    'response_format[json_object]': {
      reason: 'Anthropic has no JSON mode; use a json_schema response format',
      upstreams: ['anthropic'],
      present: jsonMode,
    },
    'tools.*.function.strict': toolStrict,
  },
  responses: {
    background: { reason: 'background mode needs stored responses; the call is answered in the foreground' },
    include: { reason: 'only `reasoning.encrypted_content` is honoured', manual: true },
    service_tier: { reason: 'the gateway chooses the upstream tier' },
    prompt_cache_key: { reason: 'OpenAI cache routing hint; not carried' },
    prompt_cache_retention: { reason: 'OpenAI cache setting; not carried' },
    truncation: { reason: 'the gateway never truncates input on the caller’s behalf' },
    context_management: { reason: 'server-side compaction needs stored state' },
    top_logprobs: { reason: 'log probabilities are not carried through the neutral form' },
    max_tool_calls: { reason: 'no equivalent upstream limit; not carried' },
    'stream_options.include_obfuscation': { reason: 'the gateway writes its own stream frames' },
    'text.verbosity': { reason: 'OpenAI-only hint; not carried' },
    'input.*.phase': { reason: 'assistant message phases are not carried' },
    'input.*[built-in]': { reason: 'built-in tool calls and outputs cannot be replayed to another upstream' },
    'tools.*[built-in]': {
      reason: 'hosted tools (web_search, file_search, …) run on OpenAI’s side, which no target here is',
    },
    client_metadata: { reason: 'client metadata is for the client’s own bookkeeping; not carried' },
    'tool_choice.tools': { reason: 'the allowed subset is not carried; its mode (auto/required) is' },
    metadata,
    'text.format[json_object]': {
      reason: 'Anthropic has no JSON mode; use a json_schema format',
      upstreams: ['anthropic'],
      present: jsonMode,
    },
    'reasoning.summary': {
      reason: 'summaries cannot be requested from these upstreams (Anthropic thinking arrives as full text)',
      upstreams: BOTH,
      present: (r: ChatRequest) => r.reasoning?.summary !== undefined,
    },
    'tools.*.strict': toolStrict,
  },
  messages: {
    cache_control: { reason: 'prompt-cache breakpoints (top level or on any block or tool) are not carried' },
    container: { reason: 'code-execution containers are not routed' },
    service_tier: { reason: 'the gateway chooses the upstream tier' },
    inference_geo: { reason: 'the gateway chooses the upstream region' },
    context_management: { reason: 'server-side context editing is not routed' },
    'thinking.display': { reason: 'thinking display options are not carried' },
    'messages.*.content.*.citations': { reason: 'citations are not carried' },
    'messages.*.content.*.context': { reason: 'document context is not carried' },
    'messages.*.content.*[server]': {
      reason: 'server-tool and search-result blocks cannot be replayed to another upstream',
    },
    'tools.*[server]': {
      reason: 'versioned server and client tools (web_search_…, bash_…, text_editor_…) are not routed',
    },
    'tools.*.defer_loading': { reason: 'tool search is Anthropic’s own; a deferred tool is offered like the others' },
    top_k: {
      reason: 'OpenAI-compatible chat completions have no top_k',
      upstreams: ['openai'],
      present: (r: ChatRequest) => r.topK !== undefined,
    },
    'thinking.budget_tokens': {
      reason: 'OpenAI reasoning takes an effort, not a token budget',
      upstreams: ['openai'],
      present: (r: ChatRequest) => r.reasoning?.budgetTokens !== undefined,
    },
    'tools.*.strict': toolStrict,
  },
  // Embeddings bodies are passed through as sent.
  embeddings: {},
} as const satisfies Record<Dialect, Record<string, DroppedFieldSpec>>;

export type DroppedField<D extends Dialect> = keyof (typeof DROPPED_FIELDS)[D] & string;

/** Records a dropped field once; the name is checked against `DROPPED_FIELDS` at compile time. */
export function dropField<D extends Dialect>(ctx: ParseContext, _dialect: D, name: DroppedField<D>): void {
  if (!ctx.dropped.includes(name)) ctx.dropped.push(name);
}

/** The top-level names each parser checks by presence alone (computed once). */
const TOP_LEVEL: Record<Dialect, string[]> = { chat: [], responses: [], messages: [], embeddings: [] };
for (const dialect of Object.keys(DROPPED_FIELDS) as Dialect[]) {
  for (const [name, spec] of Object.entries(DROPPED_FIELDS[dialect]) as Array<[string, DroppedFieldSpec]>) {
    if (!/[.[]/.test(name) && !spec.upstreams && !spec.manual) TOP_LEVEL[dialect].push(name);
  }
}

/** `false` and `null` are the defaults of these fields, so sending them asks for nothing the gateway drops. */
const isSet = (value: unknown): boolean => value !== undefined && value !== null && value !== false;

export function dropTopLevelFields(ctx: ParseContext, dialect: Dialect, body: JsonObject): void {
  for (const name of TOP_LEVEL[dialect]) {
    if (isSet(body[name]) && !ctx.dropped.includes(name)) ctx.dropped.push(name);
  }
}

/** Fields the renderer for `upstream` will leave out of this request, named as the caller's dialect names them. */
export function droppedForUpstream(dialect: Dialect, request: ChatRequest, upstream: UpstreamDialect): string[] {
  const names: string[] = [];
  for (const [name, spec] of Object.entries(DROPPED_FIELDS[dialect]) as Array<[string, DroppedFieldSpec]>) {
    if (spec.upstreams?.includes(upstream) && spec.present?.(request)) names.push(name);
  }
  return names;
}
