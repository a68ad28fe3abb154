import type { ChatRequest, McpToolSet, ToolChoice, ToolDefinition, Usage } from '../ir';
import { responsesUsage } from '../usage';

/**
 * The Responses `response` object (dialects.md §3.3): the non-streaming body, and the `response` carried by
 * the lifecycle events of a stream. Request settings are echoed the way OpenAI echoes them, so SDK code
 * that reads `response.temperature` or `response.tools` sees what it sent.
 */
export interface ResponsesObjectInput {
  id: string;
  model: string;
  /** Unix seconds. */
  createdAt: number;
  status: 'in_progress' | 'completed' | 'incomplete' | 'failed';
  output: unknown[];
  usage: Usage | null;
  incompleteDetails?: { reason: string } | null;
  error?: { code: string; message: string } | null;
  /** The caller's request, when the reply answers a Responses call; absent echoes the defaults. */
  request?: ChatRequest;
  /** The caller's `instructions`, echoed as given. */
  instructions?: string | null;
}

function toolChoiceOf(choice: ToolChoice | undefined, tools: readonly ToolDefinition[] | undefined): unknown {
  if (!choice) return 'auto';
  if (choice.type === 'tool') {
    const declared = tools?.find((tool) => tool.name === choice.name)?.declared;
    return { type: declared?.kind ?? 'function', name: declared?.name ?? choice.name };
  }
  return choice.type;
}

function functionTool(tool: ToolDefinition, name: string): Record<string, unknown> {
  return {
    type: 'function',
    name,
    description: tool.description ?? null,
    parameters: tool.parameters ?? { type: 'object', properties: {} },
    strict: tool.strict ?? false,
  };
}

/** The caller's tools as it declared them: namespaces regrouped, free-form tools as `custom` again. */
function echoTools(tools: readonly ToolDefinition[] | undefined): unknown[] {
  const out: unknown[] = [];
  let namespace: { name: string; tools: unknown[] } | undefined;
  for (const tool of tools ?? []) {
    const declared = tool.declared;
    const item = !declared
      ? functionTool(tool, tool.name)
      : declared.kind === 'function'
        ? functionTool(tool, declared.name)
        : { type: 'custom', name: declared.name, format: declared.format ?? { type: 'text' } };
    if (declared?.namespace === undefined) {
      namespace = undefined;
      out.push(item);
    } else if (namespace?.name === declared.namespace) {
      namespace.tools.push(item);
    } else {
      namespace = { name: declared.namespace, tools: [item] };
      out.push({
        type: 'namespace',
        name: declared.namespace,
        description: declared.namespaceDescription ?? '',
        tools: namespace.tools,
      });
    }
  }
  return out;
}

/** The caller's `mcp` tools as the gateway runs them: without approval, and without the credentials sent. */
function echoMcpTools(sets: readonly McpToolSet[] | undefined): unknown[] {
  return (sets ?? []).map((set) => ({
    type: 'mcp',
    server_label: set.label,
    server_url: set.url ?? null,
    allowed_tools: set.allowedTools ?? null,
    require_approval: 'never',
  }));
}

function textFormatOf(request: ChatRequest | undefined): unknown {
  const format = request?.responseFormat;
  if (!format || format.type === 'text') return { type: 'text' };
  if (format.type === 'json_object') return { type: 'json_object' };
  const out: Record<string, unknown> = { type: 'json_schema', name: format.name, schema: format.schema };
  if (format.description !== undefined) out.description = format.description;
  if (format.strict !== undefined) out.strict = format.strict;
  return out;
}

export function responsesObject(input: ResponsesObjectInput): Record<string, unknown> {
  const request = input.request;
  const object: Record<string, unknown> = {
    id: input.id,
    object: 'response',
    created_at: input.createdAt,
    status: input.status,
    error: input.error ?? null,
    incomplete_details: input.incompleteDetails ?? null,
    instructions: input.instructions ?? request?.responses?.instructions ?? null,
    max_output_tokens: request?.maxOutputTokens ?? null,
    model: input.model,
    output: input.output,
    parallel_tool_calls: request?.parallelToolCalls ?? true,
    previous_response_id: request?.responses?.previousResponseId ?? null,
    reasoning: { effort: request?.reasoning?.effort ?? null, summary: request?.reasoning?.summary ?? null },
    // Kept only when the edge keeps it (it then gave the reply its id).
    store: request?.responses?.id !== undefined,
    temperature: request?.temperature ?? 1,
    text: { format: textFormatOf(request) },
    tool_choice: toolChoiceOf(request?.toolChoice, request?.tools),
    tools: [...echoTools(request?.tools), ...echoMcpTools(request?.mcp)],
    top_p: request?.topP ?? 1,
    truncation: 'disabled',
    usage: input.usage ? responsesUsage(input.usage) : null,
    metadata: request?.metadata ?? {},
  };
  // `user` is a string or absent in OpenAI's schema; its examples' `user: null` breaks strict parsers.
  if (request?.user !== undefined) object.user = request.user;
  return object;
}
