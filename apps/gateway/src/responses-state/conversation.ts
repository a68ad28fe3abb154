import { dialectId, DialectRequestError, parseResponsesRequest, type ChatRequest, type Message } from '@sbc/dialects';
import { ApiError } from '@sbc/errors';

/**
 * A stored response's context in OpenAI's item shapes (dialects.md §3.2): what `GET /v1/responses/{id}/input_items`
 * lists and what `previous_response_id` prepends. Pure: no I/O, no clock.
 *
 * As at OpenAI, a response's input items are its whole context: the items of the response it continued (that
 * response's own input items, then its output), then the call's own `input`. Every item has an `id` (the
 * caller's, else one made here) so the list pages by item id; instructions are not items (a continuation does not
 * carry them over).
 */

export type Item = Record<string, unknown>;

/** Id prefixes of items the caller sent without one. */
const ID_PREFIX: Record<string, string> = {
  message: 'msg_',
  function_call: 'fc_',
  function_call_output: 'fco_',
  reasoning: 'rs_',
};

function idOf(item: Item, type: string): string {
  return typeof item.id === 'string' && item.id !== '' ? item.id : dialectId(ID_PREFIX[type] ?? 'item_');
}

/** A message's `content` as a list of parts (a string is one text part, input or output by role). */
function contentParts(role: unknown, content: unknown): unknown {
  if (typeof content !== 'string') return content;
  return role === 'assistant'
    ? [{ type: 'output_text', text: content, annotations: [] }]
    : [{ type: 'input_text', text: content }];
}

/** One item of the caller's `input` as it is listed: with its id, and a message's content as parts. */
function listedItem(item: Item): Item {
  const type = typeof item.type === 'string' ? item.type : 'message';
  const id = idOf(item, type);
  // The id first, as OpenAI lists items; one the caller gave that is not a string is replaced.
  const listed: Item = { id, ...item, type };
  listed.id = id;
  if (type === 'message') {
    listed.content = contentParts(item.role, item.content);
    listed.status ??= 'completed';
  } else if (type === 'function_call' || type === 'function_call_output') {
    listed.status ??= 'completed';
  }
  return listed;
}

/** The call's `input` (a string or items, already checked by the dialect's parser) as listed items. */
export function inputItemsOf(input: unknown): Item[] {
  if (typeof input === 'string') return [listedItem({ type: 'message', role: 'user', content: input })];
  if (!Array.isArray(input)) return [];
  return input.filter((item): item is Item => item !== null && typeof item === 'object').map(listedItem);
}

/** What a continuation of a stored response starts from: its input items, then its output. */
export function contextOf(inputItems: Item[], response: { output?: unknown }): Item[] {
  const output = Array.isArray(response.output) ? (response.output as Item[]) : [];
  return [...inputItems, ...output];
}

/**
 * Refuses a context in which two items share an id, as OpenAI does (`after` pages by id): most often an item of
 * the continued response sent again in `input`.
 */
export function checkDistinctIds(items: readonly Item[], continued: number): void {
  const first = new Map<string, number>();
  for (const [index, item] of items.entries()) {
    const id = item.id as string;
    const earlier = first.get(id);
    if (earlier === undefined) {
      first.set(id, index);
      continue;
    }
    const message =
      earlier < continued
        ? `Duplicate item found with id ${id}: it is already part of the response previous_response_id names; ` +
          'remove it from input.'
        : `Duplicate item found with id ${id}: each input item needs its own id.`;
    const path = index < continued ? 'previous_response_id' : `input.${index - continued}.id`;
    throw ApiError.invalid([{ path, code: 'invalid_value', message }]);
  }
}

/**
 * Puts a stored response's context before the call's own turns in its neutral request, after the call's own
 * instructions (the continued response's are not carried over). The turns meet as if the caller had sent the
 * context in `input` itself: an assistant turn continues the one before it, and tool results join the tool
 * results before them, as the dialect's parser joins them.
 */
export function prependContext(request: ChatRequest, context: Item[]): void {
  let prior: Message[];
  try {
    prior = parseResponsesRequest({ model: request.model, input: context }).messages;
  } catch (error) {
    if (!(error instanceof DialectRequestError)) throw error;
    throw new ApiError('invalid_request', 'The stored conversation of previous_response_id cannot be read.', {
      param: 'previous_response_id',
    });
  }
  const lead = request.responses?.instructions ? 1 : 0;
  const own = request.messages.slice(lead);
  const last = prior[prior.length - 1];
  const first = own[0];
  if (last && first && joins(last, first)) {
    prior[prior.length - 1] = { ...last, content: [...last.content, ...first.content] } as Message;
    own.shift();
  }
  request.messages = [...request.messages.slice(0, lead), ...prior, ...own];
}

function onlyToolResults(message: Message): boolean {
  return (
    message.role === 'user' && message.content.length > 0 && message.content.every((b) => b.type === 'tool_result')
  );
}

function joins(last: Message, first: Message): boolean {
  if (last.role === 'assistant' && first.role === 'assistant') return true;
  return onlyToolResults(last) && onlyToolResults(first);
}
