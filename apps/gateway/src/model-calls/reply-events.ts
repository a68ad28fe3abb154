import { mergeUsage, ZERO_USAGE, type AssistantBlock, type ChatResponse, type StreamEvent } from '@sbc/dialects';

// A reply in the neutral form (libs/dialects ir.ts) and the events of a stream that carries it, both ways: what
// a hook that keeps a streamed reply records, and what a reply a hook answered with is replayed as.

/** Assembles a streamed reply's neutral events into the reply they make. */
export class ReplyRecorder {
  private readonly reply: ChatResponse = {
    id: '',
    model: '',
    created: 0,
    content: [],
    stopReason: 'end_turn',
    usage: ZERO_USAGE,
  };
  private readonly toolCalls = new Map<number, AssistantBlock & { type: 'tool_call' }>();
  private stopped = false;
  private ended = false;
  private failed = false;

  push(event: StreamEvent): void {
    const reply = this.reply;
    const last = reply.content.at(-1);
    switch (event.type) {
      case 'start':
        reply.id = event.id;
        reply.model = event.model;
        reply.created = event.created;
        if (event.usage) reply.usage = mergeUsage(reply.usage, event.usage);
        break;
      case 'text':
      case 'refusal':
        if (last?.type === event.type) last.text += event.text;
        else reply.content.push({ type: event.type, text: event.text });
        break;
      case 'reasoning':
        if (last?.type === 'reasoning' && last.signature === undefined && last.redacted === undefined)
          last.text += event.text;
        else reply.content.push({ type: 'reasoning', text: event.text });
        break;
      case 'reasoning_signature':
        if (last?.type === 'reasoning') Object.assign(last, { signature: event.signature, origin: event.origin });
        else reply.content.push({ type: 'reasoning', text: '', signature: event.signature, origin: event.origin });
        break;
      case 'reasoning_redacted':
        reply.content.push({ type: 'reasoning', text: '', redacted: event.data });
        break;
      case 'tool_call': {
        const call = { type: 'tool_call' as const, id: event.id, name: event.name, arguments: '' };
        this.toolCalls.set(event.index, call);
        reply.content.push(call);
        break;
      }
      case 'tool_arguments': {
        const call = this.toolCalls.get(event.index);
        if (call) call.arguments += event.delta;
        else this.failed = true;
        break;
      }
      case 'mcp':
        (reply.mcp ??= []).push(event.item);
        break;
      case 'usage':
        reply.usage = mergeUsage(reply.usage, event.usage);
        break;
      case 'stop':
        this.stopped = true;
        reply.stopReason = event.reason;
        if (event.stopSequence !== undefined) reply.stopSequence = event.stopSequence;
        break;
      case 'error':
        this.failed = true;
        break;
      case 'end':
        this.ended = true;
        break;
    }
  }

  /** The reply, once its stream reached its own clean end with a stop reason; undefined otherwise. */
  finished(): ChatResponse | undefined {
    return this.ended && this.stopped && !this.failed ? this.reply : undefined;
  }
}

/** A reply as the neutral events of a stream that carries it, for a stream renderer to replay. */
export function eventsOfReply(reply: ChatResponse): StreamEvent[] {
  const events: StreamEvent[] = [{ type: 'start', id: reply.id, model: reply.model, created: reply.created }];
  for (const item of reply.mcp ?? []) events.push({ type: 'mcp', item });
  let toolIndex = 0;
  for (const block of reply.content) {
    switch (block.type) {
      case 'text':
      case 'refusal':
        events.push({ type: block.type, text: block.text });
        break;
      case 'reasoning':
        if (block.redacted !== undefined) {
          events.push({ type: 'reasoning_redacted', data: block.redacted });
          break;
        }
        if (block.text !== '') events.push({ type: 'reasoning', text: block.text });
        if (block.signature !== undefined)
          events.push({ type: 'reasoning_signature', signature: block.signature, origin: block.origin ?? 'anthropic' });
        break;
      case 'tool_call': {
        const index = toolIndex++;
        events.push({ type: 'tool_call', index, id: block.id, name: block.name });
        if (block.arguments !== '') events.push({ type: 'tool_arguments', index, delta: block.arguments });
        break;
      }
    }
  }
  events.push(
    { type: 'usage', usage: reply.usage },
    reply.stopSequence === undefined
      ? { type: 'stop', reason: reply.stopReason }
      : { type: 'stop', reason: reply.stopReason, stopSequence: reply.stopSequence },
    { type: 'end' },
  );
  return events;
}
