import { dialectId } from '../ids';
import type { DeclaredTool } from '../ir';
import { freeFormInput } from '../tool-names';

/**
 * A tool call's output item as the caller declared the tool (dialects.md §3.3): a `function_call` under the
 * function's own `name` with its `namespace` when it came from a namespace tool (OpenAI's `FunctionToolCall`),
 * or a `custom_tool_call` whose `input` is the free-form text the target wrote as the function's one argument.
 * Shared by the non-streaming renderer and the stream renderer, so both name a call alike.
 */

export type CallStatus = 'in_progress' | 'completed' | 'incomplete';

export interface CallFields {
  /** The item id (`fc_…`, `ctc_…`). */
  id: string;
  callId: string;
  /** The function's name as the target saw it. */
  name: string;
  /** The arguments' JSON text so far (empty while a streamed item is only opened). */
  arguments: string;
}

/** The item id prefix for a call to this tool. */
export const callItemId = (declared: DeclaredTool | undefined): string =>
  dialectId(declared?.kind === 'custom' ? 'ctc_' : 'fc_');

export function callItem(
  call: CallFields,
  declared: DeclaredTool | undefined,
  status: CallStatus,
): Record<string, unknown> {
  if (declared?.kind === 'custom') {
    const item: Record<string, unknown> = {
      id: call.id,
      type: 'custom_tool_call',
      call_id: call.callId,
      name: declared.name,
      input: status === 'in_progress' ? '' : freeFormInput(call.arguments),
    };
    if (declared.namespace !== undefined) item.namespace = declared.namespace;
    return item;
  }
  const item: Record<string, unknown> = {
    id: call.id,
    type: 'function_call',
    status,
    // A call without arguments is `{}`: clients parse the final text.
    arguments: status === 'in_progress' || call.arguments !== '' ? call.arguments : '{}',
    call_id: call.callId,
    name: declared?.name ?? call.name,
  };
  if (declared?.namespace !== undefined) item.namespace = declared.namespace;
  return item;
}
