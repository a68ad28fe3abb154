import { documentFromFileData, imageFromUrl } from '../data-url';
import { dropField } from '../dropped-fields';
import type { AssistantBlock, ImageBlock, Message, TextBlock, ToolResultBlock, UserBlock } from '../ir';
import { isObject, type JsonObject } from '../json';
import {
  addIssue,
  at,
  eachObject,
  readEnum,
  readObject,
  readString,
  typeName,
  type ParseContext,
} from '../parse-context';

/** Chat `messages` (dialects.md §2.2) into neutral turns. */

const IMAGE_DETAILS = ['auto', 'low', 'high'] as const;

export function parseChatMessages(ctx: ParseContext, items: unknown[]): Message[] {
  const turns: Message[] = [];
  eachObject(ctx, items, 'messages', (item, path) => {
    if (item.name !== undefined && item.name !== null) dropField(ctx, 'chat', 'messages.*.name');
    switch (item.role) {
      case 'system':
      case 'developer':
        // Kept in place: the OpenAI renderers keep it there, the Messages renderer hoists or converts it.
        turns.push({ role: 'system', content: parseTextContent(ctx, item, path, true) });
        return;
      case 'user':
        turns.push({ role: 'user', content: parseUserContent(ctx, item, path) });
        return;
      case 'assistant':
        turns.push({ role: 'assistant', content: parseAssistant(ctx, item, path) });
        return;
      case 'tool': {
        const result = parseToolMessage(ctx, item, path);
        if (!result) return;
        // One tool message per result in chat; one user turn holding all results of a step in the neutral form.
        const last = turns[turns.length - 1];
        if (
          last?.role === 'user' &&
          last.content.length > 0 &&
          last.content.every((block) => block.type === 'tool_result')
        ) {
          last.content.push(result);
        } else {
          turns.push({ role: 'user', content: [result] });
        }
        return;
      }
      case 'function':
        addIssue(
          ctx,
          at(path, 'role'),
          'unsupported',
          'deprecated `function` messages are not supported; use `tools` and `tool` messages',
        );
        return;
      case undefined:
      case null:
        addIssue(ctx, at(path, 'role'), 'required', 'is required');
        return;
      default:
        addIssue(ctx, at(path, 'role'), 'invalid_value', 'must be one of system, developer, user, assistant, tool');
    }
  });
  return turns;
}

/** System, developer and tool content: a string or text parts only. */
function parseTextContent(ctx: ParseContext, item: JsonObject, path: string, required: boolean): TextBlock[] {
  const content = item.content;
  const where = at(path, 'content');
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (content === undefined || content === null) {
    if (required) addIssue(ctx, where, 'required', 'is required');
    return [];
  }
  if (!Array.isArray(content)) {
    addIssue(ctx, where, 'invalid_type', `expected a string or an array of text parts, received ${typeName(content)}`);
    return [];
  }
  const blocks: TextBlock[] = [];
  eachObject(ctx, content, where, (part, partPath) => {
    if (part.type !== 'text') {
      addIssue(ctx, at(partPath, 'type'), 'invalid_value', 'must be text here');
      return;
    }
    const text = readString(ctx, part, 'text', partPath, { required: true });
    if (text !== undefined) blocks.push({ type: 'text', text });
  });
  return blocks;
}

function parseUserContent(ctx: ParseContext, item: JsonObject, path: string): UserBlock[] {
  const content = item.content;
  const where = at(path, 'content');
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) {
    if (content === undefined || content === null) addIssue(ctx, where, 'required', 'is required');
    else
      addIssue(
        ctx,
        where,
        'invalid_type',
        `expected a string or an array of content parts, received ${typeName(content)}`,
      );
    return [];
  }
  const blocks: UserBlock[] = [];
  eachObject(ctx, content, where, (part, partPath) => {
    if (part.prompt_cache_breakpoint !== undefined)
      dropField(ctx, 'chat', 'messages.*.content.*.prompt_cache_breakpoint');
    const block = parseUserPart(ctx, part, partPath);
    if (block) blocks.push(block);
  });
  return blocks;
}

function parseUserPart(ctx: ParseContext, part: JsonObject, path: string): UserBlock | undefined {
  switch (part.type) {
    case 'text': {
      const text = readString(ctx, part, 'text', path, { required: true });
      return text === undefined ? undefined : { type: 'text', text };
    }
    case 'image_url':
      return parseImagePart(ctx, part, path);
    case 'file': {
      const file = readObject(ctx, part, 'file', path, true);
      if (!file) return undefined;
      const filePath = at(path, 'file');
      const filename = readString(ctx, file, 'filename', filePath);
      const fileData = readString(ctx, file, 'file_data', filePath);
      if (fileData !== undefined) {
        const outcome = documentFromFileData(fileData, filename);
        if ('ok' in outcome) return outcome.ok;
        addIssue(ctx, at(filePath, 'file_data'), 'invalid_value', outcome.error);
      } else if (file.file_id !== undefined && file.file_id !== null) {
        addIssue(
          ctx,
          at(filePath, 'file_id'),
          'unsupported',
          'uploaded files are not available through the gateway; send file_data',
        );
      } else {
        addIssue(ctx, at(filePath, 'file_data'), 'required', 'is required');
      }
      return undefined;
    }
    case 'input_audio':
      addIssue(ctx, at(path, 'type'), 'unsupported', 'audio input cannot be carried to the routed models');
      return undefined;
    default:
      addIssue(ctx, at(path, 'type'), 'invalid_value', 'must be one of text, image_url, file, input_audio');
      return undefined;
  }
}

function parseImagePart(ctx: ParseContext, part: JsonObject, path: string): ImageBlock | undefined {
  // Some clients send `image_url` as the URL string itself; the object form is the documented one.
  let url: string | undefined;
  let detail: ImageBlock['detail'];
  const where = at(path, 'image_url');
  if (typeof part.image_url === 'string') {
    url = part.image_url;
  } else {
    const image = readObject(ctx, part, 'image_url', path, true);
    if (!image) return undefined;
    url = readString(ctx, image, 'url', where, { required: true, nonEmpty: true });
    detail = readEnum(ctx, image, 'detail', where, IMAGE_DETAILS);
  }
  if (url === undefined) return undefined;
  const outcome = imageFromUrl(url, detail);
  if ('ok' in outcome) return outcome.ok;
  addIssue(ctx, at(where, 'url'), 'invalid_value', outcome.error);
  return undefined;
}

function parseAssistant(ctx: ParseContext, item: JsonObject, path: string): AssistantBlock[] {
  const blocks: AssistantBlock[] = [];
  // Non-standard reasoning text (DeepSeek `reasoning_content`, vLLM/OpenRouter `reasoning`): unsigned, so it
  // never becomes an Anthropic thinking block, but chat upstreams that want it replayed get nothing worse.
  const reasoning =
    typeof item.reasoning_content === 'string'
      ? item.reasoning_content
      : typeof item.reasoning === 'string'
        ? item.reasoning
        : undefined;
  if (reasoning) blocks.push({ type: 'reasoning', text: reasoning, origin: 'openai' });

  const content = item.content;
  const where = at(path, 'content');
  if (typeof content === 'string') {
    if (content !== '') blocks.push({ type: 'text', text: content });
  } else if (Array.isArray(content)) {
    eachObject(ctx, content, where, (part, partPath) => {
      if (part.type === 'text') {
        const text = readString(ctx, part, 'text', partPath, { required: true });
        if (text) blocks.push({ type: 'text', text });
      } else if (part.type === 'refusal') {
        const text = readString(ctx, part, 'refusal', partPath, { required: true });
        if (text) blocks.push({ type: 'refusal', text });
      } else {
        addIssue(ctx, at(partPath, 'type'), 'invalid_value', 'must be text or refusal');
      }
    });
  } else if (content !== undefined && content !== null) {
    addIssue(ctx, where, 'invalid_type', `expected a string, an array of parts or null, received ${typeName(content)}`);
  }

  const refusal = readString(ctx, item, 'refusal', path);
  if (refusal) blocks.push({ type: 'refusal', text: refusal });
  if (item.audio !== undefined && item.audio !== null) dropField(ctx, 'chat', 'messages.*.audio');

  const calls = item.tool_calls;
  if (Array.isArray(calls)) {
    eachObject(ctx, calls, at(path, 'tool_calls'), (call, callPath) => {
      const id = readString(ctx, call, 'id', callPath, { required: true, nonEmpty: true });
      const fn = readObject(ctx, call, 'function', callPath, true);
      if (call.type !== undefined && call.type !== 'function')
        addIssue(ctx, at(callPath, 'type'), 'invalid_value', 'must be function');
      if (!fn) return;
      const fnPath = at(callPath, 'function');
      const name = readString(ctx, fn, 'name', fnPath, { required: true, nonEmpty: true });
      // Arguments are JSON text on the wire; a few clients replay the parsed object, which means the same.
      const args = isObject(fn.arguments)
        ? JSON.stringify(fn.arguments)
        : (readString(ctx, fn, 'arguments', fnPath) ?? '');
      if (id !== undefined && name !== undefined) blocks.push({ type: 'tool_call', id, name, arguments: args });
    });
  } else if (calls !== undefined && calls !== null) {
    addIssue(ctx, at(path, 'tool_calls'), 'invalid_type', `expected an array, received ${typeName(calls)}`);
  }
  return blocks;
}

function parseToolMessage(ctx: ParseContext, item: JsonObject, path: string): ToolResultBlock | undefined {
  const callId = readString(ctx, item, 'tool_call_id', path, { required: true, nonEmpty: true });
  const content = parseTextContent(ctx, item, path, true).filter((block) => block.text !== '');
  return callId === undefined ? undefined : { type: 'tool_result', callId, content };
}
