import type { RequestHandler } from 'express';
import { fromResponses } from '../generation/conversation';
import { planReply, type ReplyPlan } from '../generation/reply';
import { estimateInputTokens } from '../generation/tokens';
import { newId, unixSeconds } from '../wire/ids';
import { waitForWholeReply } from '../wire/pacing';
import { parseRequest, responsesCountSchema, responsesRequestSchema, type ResponsesRequest } from '../wire/requests';
import { beginCall, streamReply, type RouteDeps } from './call';

/** OpenAI Responses: `POST /v1/responses` and `POST /v1/responses/input_tokens` (dialects.md §3). Stateless. */

type Status = 'in_progress' | 'completed' | 'incomplete';

interface Ids {
  response: string;
  item: string;
  call: string;
  createdAt: number;
}

function responsesUsage(inputTokens: number, outputTokens: number) {
  return {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: inputTokens + outputTokens,
  };
}

const finalStatus = (plan: ReplyPlan): Status =>
  plan.kind === 'text' && plan.finish === 'length' ? 'incomplete' : 'completed';

/**
 * The output item as it stands once `text`/`args` have been produced: a function call carries its namespace
 * when its tool was one of a namespace's (OpenAI's `FunctionToolCall`); a custom tool's call is a
 * `custom_tool_call` whose `input` is the free-form text.
 */
function outputItem(plan: ReplyPlan, ids: Ids, status: Status, produced: string) {
  if (plan.kind === 'tool') {
    const namespace = plan.namespace === undefined ? {} : { namespace: plan.namespace };
    if (plan.freeForm)
      return {
        type: 'custom_tool_call',
        id: ids.item,
        call_id: ids.call,
        name: plan.name,
        input: produced,
        ...namespace,
      };
    return {
      type: 'function_call',
      id: ids.item,
      call_id: ids.call,
      name: plan.name,
      ...namespace,
      arguments: produced,
      status,
    };
  }
  const content = status === 'in_progress' ? [] : [textPart(produced)];
  return { type: 'message', id: ids.item, status, role: 'assistant', content };
}

const textPart = (text: string) => ({ type: 'output_text', text, annotations: [], logprobs: [] });

function responseObject(
  body: ResponsesRequest,
  ids: Ids,
  status: Status,
  output: unknown[],
  usage: ReturnType<typeof responsesUsage> | null,
) {
  return {
    id: ids.response,
    object: 'response',
    created_at: ids.createdAt,
    status,
    error: null,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: body.model,
    output,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: { effort: body.reasoning?.effort ?? null, summary: body.reasoning?.summary ?? null },
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    top_p: body.top_p ?? 1,
    text: body.text ?? { format: { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    truncation: body.truncation ?? 'disabled',
    metadata: body.metadata ?? {},
    user: body.user ?? null,
    usage,
  };
}

export function responsesRoute(deps: RouteDeps): RequestHandler {
  return async (req, res) => {
    const body = parseRequest(responsesRequestSchema, req.body, 'openai');
    const call = await beginCall(body.model, 'openai', res, deps);
    if (!call) return;
    // Responses has no stop sequences.
    const plan = planReply(fromResponses(body), { maxTokens: body.max_output_tokens ?? undefined, stop: [] });
    const usage = responsesUsage(estimateInputTokens(body.input, body.instructions, body.tools), plan.pieces.length);
    const ids: Ids = {
      response: newId('resp_'),
      item: plan.kind === 'text' ? newId('msg_') : plan.freeForm ? newId('ctc_') : newId('fc_'),
      call: newId('call_'),
      createdAt: unixSeconds(),
    };
    const status = finalStatus(plan);
    const produced = plan.kind === 'tool' ? plan.arguments : plan.pieces.join('');
    const finalItem = outputItem(plan, ids, status, produced);

    if (!body.stream) {
      if (await waitForWholeReply(deps.timing, plan.pieces.length, call.signal)) {
        res.json(responseObject(body, ids, status, [finalItem], usage));
      }
      return;
    }

    await streamReply(res, call.signal, deps, async (sse, pacer) => {
      let sequence = 0;
      const emit = (type: string, payload: object) => sse.send(type, { type, sequence_number: sequence++, ...payload });
      const at = { item_id: ids.item, output_index: 0 };
      const textAt = { ...at, content_index: 0 };

      if (!(await pacer.beforeToken(0))) return;
      const opening = responseObject(body, ids, 'in_progress', [], null);
      if (!(await emit('response.created', { response: opening }))) return;
      if (!(await emit('response.in_progress', { response: opening }))) return;
      if (
        !(await emit('response.output_item.added', { output_index: 0, item: outputItem(plan, ids, 'in_progress', '') }))
      )
        return;
      if (plan.kind === 'text' && !(await emit('response.content_part.added', { ...textAt, part: textPart('') })))
        return;

      const deltaEvent = plan.kind === 'tool' && plan.freeForm ? 'response.custom_tool_call_input.delta' : undefined;
      for (const [index, piece] of plan.pieces.entries()) {
        if (!(await pacer.beforeToken(index))) return;
        const sent =
          plan.kind === 'tool'
            ? await emit(deltaEvent ?? 'response.function_call_arguments.delta', { ...at, delta: piece })
            : await emit('response.output_text.delta', { ...textAt, delta: piece, logprobs: [] });
        if (!sent) return;
      }

      if (plan.kind === 'tool' && plan.freeForm) {
        if (!(await emit('response.custom_tool_call_input.done', { ...at, input: produced }))) return;
      } else if (plan.kind === 'tool') {
        if (!(await emit('response.function_call_arguments.done', { ...at, name: plan.name, arguments: produced })))
          return;
      } else {
        if (!(await emit('response.output_text.done', { ...textAt, text: produced, logprobs: [] }))) return;
        if (!(await emit('response.content_part.done', { ...textAt, part: textPart(produced) }))) return;
      }
      if (!(await emit('response.output_item.done', { output_index: 0, item: finalItem }))) return;
      const terminal = status === 'incomplete' ? 'response.incomplete' : 'response.completed';
      await emit(terminal, { response: responseObject(body, ids, status, [finalItem], usage) });
    });
  };
}

export function responsesInputTokensRoute(): RequestHandler {
  return (req, res) => {
    const body = parseRequest(responsesCountSchema, req.body, 'openai');
    res.json({
      object: 'response.input_tokens',
      input_tokens: estimateInputTokens(body.input, body.instructions, body.tools),
    });
  };
}
