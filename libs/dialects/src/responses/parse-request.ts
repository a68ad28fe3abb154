import { dropField, dropTopLevelFields } from '../dropped-fields';
import type { ChatRequest, Message, ReasoningRequest, ResponseFormat } from '../ir';
import type { JsonObject } from '../json';
import {
  addIssue,
  createParseContext,
  finishRequest,
  readArray,
  readBoolean,
  readEnum,
  readNumber,
  readObject,
  readString,
  readStringMap,
  requireBodyObject,
  typeName,
  type ParseContext,
} from '../parse-context';
import { readJsonSchemaFormat } from '../parse-tools';
import { REASONING_EFFORTS } from '../reasoning-effort';
import { parseResponsesInput } from './parse-input';
import { parseResponsesTools, parseResponsesToolChoice } from './parse-tools';

/** What a response id looks like: `resp_` and letters, digits, `_` or `-` (OpenAI's and the gateway's). */
export const RESPONSE_ID = /^resp_[A-Za-z0-9_-]{1,200}$/;

/** A Responses request body (dialects.md §3.1) into the neutral form; throws `DialectRequestError`. */
export function parseResponsesRequest(body: unknown): ChatRequest {
  const obj = requireBodyObject(body);
  const ctx = createParseContext();

  const model = readString(ctx, obj, 'model', '', { required: true, nonEmpty: true });
  // Stored responses are the edge's (previous_response_id is expanded there); conversations and prompts are not
  // kept, and answering without the history they name would be a different conversation.
  for (const field of ['conversation', 'prompt'] as const) {
    if (obj[field] !== undefined && obj[field] !== null) {
      addIssue(
        ctx,
        field,
        'unsupported',
        'the gateway keeps no conversations or prompts; send the conversation in `input` or name a stored ' +
          'response in `previous_response_id`',
      );
    }
  }
  const previousResponseId = readString(ctx, obj, 'previous_response_id', '');
  if (previousResponseId !== undefined && !RESPONSE_ID.test(previousResponseId))
    addIssue(ctx, 'previous_response_id', 'invalid_value', 'must be the id of a response (resp_…)');
  const store = readBoolean(ctx, obj, 'store', '') ?? true;

  // Tools first: calls in the input name namespaced tools by the flat names the tools were given.
  const tools = parseResponsesTools(ctx, obj);
  const messages: Message[] = [];
  const instructions = readString(ctx, obj, 'instructions', '');
  if (instructions) messages.push({ role: 'system', content: [{ type: 'text', text: instructions }] });
  const input = obj.input;
  if (typeof input === 'string') {
    messages.push({ role: 'user', content: [{ type: 'text', text: input }] });
  } else if (Array.isArray(input)) {
    messages.push(...parseResponsesInput(ctx, input, tools.naming));
  } else if (input === undefined || input === null) {
    addIssue(ctx, 'input', 'required', 'is required');
  } else {
    addIssue(ctx, 'input', 'invalid_type', `expected a string or an array of input items, received ${typeName(input)}`);
  }

  const streamOptions = readObject(ctx, obj, 'stream_options', '');
  if (streamOptions?.include_obfuscation != null) dropField(ctx, 'responses', 'stream_options.include_obfuscation');
  readIncludes(ctx, obj);

  const request: Omit<ChatRequest, 'dropped'> = {
    model: model ?? '',
    messages,
    stream: readBoolean(ctx, obj, 'stream', '') ?? false,
    maxOutputTokens: readNumber(ctx, obj, 'max_output_tokens', '', { integer: true, min: 0 }),
    temperature: readNumber(ctx, obj, 'temperature', '', { min: 0, max: 2 }),
    topP: readNumber(ctx, obj, 'top_p', '', { min: 0, max: 1 }),
    tools: tools.tools,
    toolChoice: parseResponsesToolChoice(ctx, obj, tools.tools),
    parallelToolCalls: readBoolean(ctx, obj, 'parallel_tool_calls', ''),
    responseFormat: parseTextFormat(ctx, obj),
    reasoning: parseReasoning(ctx, obj),
    user: readString(ctx, obj, 'safety_identifier', '') ?? readString(ctx, obj, 'user', ''),
    metadata: readStringMap(ctx, obj, 'metadata', ''),
    ...(tools.mcp ? { mcp: tools.mcp } : {}),
    responses: {
      store,
      ...(previousResponseId !== undefined ? { previousResponseId } : {}),
      ...(instructions !== undefined ? { instructions } : {}),
    },
  };

  dropTopLevelFields(ctx, 'responses', obj);
  return finishRequest(ctx, request);
}

/** `include`: encrypted reasoning is honoured (see reasoning-carrier); every other inclusion is dropped. */
function readIncludes(ctx: ParseContext, obj: JsonObject): void {
  const includes = readArray(ctx, obj, 'include', '');
  if (includes?.some((value) => value !== 'reasoning.encrypted_content')) dropField(ctx, 'responses', 'include');
}

function parseTextFormat(ctx: ParseContext, obj: JsonObject): ResponseFormat | undefined {
  const text = readObject(ctx, obj, 'text', '');
  if (!text) return undefined;
  if (text.verbosity !== undefined && text.verbosity !== null) dropField(ctx, 'responses', 'text.verbosity');
  const format = readObject(ctx, text, 'format', 'text');
  if (!format) return undefined;
  switch (format.type) {
    case 'text':
    case 'json_object':
      return { type: format.type };
    case 'json_schema':
      return readJsonSchemaFormat(ctx, format, 'text.format');
    default:
      addIssue(ctx, 'text.format.type', 'invalid_value', 'must be text, json_object or json_schema');
      return undefined;
  }
}

function parseReasoning(ctx: ParseContext, obj: JsonObject): ReasoningRequest | undefined {
  const reasoning = readObject(ctx, obj, 'reasoning', '');
  if (!reasoning) return undefined;
  const effort = readEnum(ctx, reasoning, 'effort', 'reasoning', REASONING_EFFORTS);
  // `generate_summary` is the deprecated name of `summary`.
  const summaryKey = reasoning.summary == null && reasoning.generate_summary != null ? 'generate_summary' : 'summary';
  const summary = readEnum(ctx, reasoning, summaryKey, 'reasoning', ['auto', 'concise', 'detailed'] as const);
  if (effort === undefined && summary === undefined) return undefined;
  const out: ReasoningRequest = {};
  if (effort !== undefined) out.effort = effort;
  if (summary !== undefined) out.summary = summary;
  return out;
}
