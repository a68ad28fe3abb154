import { documentFromFileData, imageFromUrl } from '../data-url';
import { dropField } from '../dropped-fields';
import type {
  DocumentBlock,
  ImageBlock,
  Message,
  RefusalBlock,
  TextBlock,
  ToolResultBlock,
  AssistantBlock,
} from '../ir';
import { isObject, type JsonObject } from '../json';
import { addIssue, at, eachObject, readEnum, readString, typeName, type ParseContext } from '../parse-context';
import { FREE_FORM_ARGUMENT, type ToolNaming } from '../tool-names';
import { reasoningFromItem } from './reasoning-carrier';

/** Responses `input` items (dialects.md §3.2) into neutral turns. */

type InputPart = TextBlock | ImageBlock | DocumentBlock;

const IMAGE_DETAILS = ['auto', 'low', 'high', 'original'] as const;
const MESSAGE_ROLES = ['user', 'assistant', 'system', 'developer'] as const;

/** Items of built-in tools: a stored conversation may hold them, but no other upstream can take them back. */
const BUILT_IN_ITEMS = new Set([
  'web_search_call',
  'file_search_call',
  'computer_call',
  'computer_call_output',
  'code_interpreter_call',
  'image_generation_call',
  'local_shell_call',
  'local_shell_call_output',
  'shell_call',
  'shell_call_output',
  'apply_patch_call',
  'apply_patch_call_output',
  'mcp_call',
  'mcp_list_tools',
  'mcp_approval_request',
  'mcp_approval_response',
  'compaction',
]);

/** `naming`: the flat names of the request's namespaced tools, which calls in the history are sent under. */
export function parseResponsesInput(ctx: ParseContext, items: unknown[], naming: () => ToolNaming): Message[] {
  const turns: Message[] = [];
  // Consecutive assistant items (reasoning, message, function calls) are one turn, as Anthropic needs them.
  const assistant = (blocks: AssistantBlock[]) => {
    const last = turns[turns.length - 1];
    if (last?.role === 'assistant') last.content.push(...blocks);
    else turns.push({ role: 'assistant', content: blocks });
  };
  const toolResult = (block: ToolResultBlock) => {
    const last = turns[turns.length - 1];
    if (last?.role === 'user' && last.content.length > 0 && last.content.every((b) => b.type === 'tool_result'))
      last.content.push(block);
    else turns.push({ role: 'user', content: [block] });
  };

  eachObject(ctx, items, 'input', (item, path) => {
    const type = item.type ?? 'message';
    switch (type) {
      case 'message': {
        if (item.phase !== undefined && item.phase !== null) dropField(ctx, 'responses', 'input.*.phase');
        const role = readEnum(ctx, item, 'role', path, MESSAGE_ROLES, true);
        if (role === undefined) return;
        const parts = parseMessageContent(ctx, item, path, role);
        if (role === 'assistant')
          assistant(parts.filter((p): p is TextBlock | RefusalBlock => p.type === 'text' || p.type === 'refusal'));
        else if (role === 'user')
          turns.push({ role: 'user', content: parts.filter((p): p is InputPart => p.type !== 'refusal') });
        else turns.push({ role: 'system', content: parts.filter((p): p is TextBlock => p.type === 'text') });
        return;
      }
      case 'function_call':
      case 'custom_tool_call': {
        const callId = readString(ctx, item, 'call_id', path, { required: true, nonEmpty: true });
        const name = readString(ctx, item, 'name', path, { required: true, nonEmpty: true });
        const namespace = readString(ctx, item, 'namespace', path, { nonEmpty: true });
        // A free-form call's text is the one argument of the function it was offered as.
        const args =
          type === 'function_call'
            ? (readString(ctx, item, 'arguments', path) ?? '')
            : JSON.stringify({ [FREE_FORM_ARGUMENT]: readString(ctx, item, 'input', path, { required: true }) ?? '' });
        if (callId === undefined || name === undefined) return;
        const target = namespace === undefined ? name : naming().flatName(namespace, name);
        assistant([{ type: 'tool_call', id: callId, name: target, arguments: args }]);
        return;
      }
      case 'function_call_output':
      case 'custom_tool_call_output': {
        const callId = readString(ctx, item, 'call_id', path, { required: true, nonEmpty: true });
        const content = parseOutput(ctx, item, path);
        if (callId !== undefined) toolResult({ type: 'tool_result', callId, content });
        return;
      }
      case 'reasoning': {
        const text = reasoningText(ctx, item, path);
        const encrypted = readString(ctx, item, 'encrypted_content', path);
        assistant([reasoningFromItem(text, encrypted, readString(ctx, item, 'id', path))]);
        return;
      }
      case 'item_reference':
        addIssue(
          ctx,
          at(path, 'type'),
          'unsupported',
          'item references are not resolved; send the items themselves, or continue a stored response with ' +
            'previous_response_id',
        );
        return;
      default:
        if (typeof type === 'string' && BUILT_IN_ITEMS.has(type)) dropField(ctx, 'responses', 'input.*[built-in]');
        else
          addIssue(
            ctx,
            at(path, 'type'),
            'invalid_value',
            'must be message, function_call, function_call_output, custom_tool_call, custom_tool_call_output ' +
              'or reasoning',
          );
    }
  });
  return turns;
}

function parseMessageContent(
  ctx: ParseContext,
  item: JsonObject,
  path: string,
  role: string,
): Array<InputPart | RefusalBlock> {
  const content = item.content;
  const where = at(path, 'content');
  if (typeof content === 'string')
    return content === '' && role === 'assistant' ? [] : [{ type: 'text', text: content }];
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
  const parts: Array<InputPart | RefusalBlock> = [];
  eachObject(ctx, content, where, (part, partPath) => {
    switch (part.type) {
      case 'input_text':
      case 'output_text':
      case 'text': {
        const text = readString(ctx, part, 'text', partPath, { required: true });
        if (text !== undefined) parts.push({ type: 'text', text });
        return;
      }
      case 'refusal': {
        const text = readString(ctx, part, 'refusal', partPath, { required: true });
        if (text) parts.push({ type: 'refusal', text });
        return;
      }
      case 'input_image':
      case 'input_file': {
        if (role !== 'user') {
          addIssue(ctx, at(partPath, 'type'), 'invalid_value', `${part.type} is only allowed in user messages`);
          return;
        }
        const block = parseInputMedia(ctx, part, partPath);
        if (block) parts.push(block);
        return;
      }
      default:
        addIssue(
          ctx,
          at(partPath, 'type'),
          'invalid_value',
          'must be input_text, input_image, input_file, output_text or refusal',
        );
    }
  });
  return parts;
}

/** `input_image` and `input_file` parts, in messages and in tool outputs alike. */
function parseInputMedia(ctx: ParseContext, part: JsonObject, path: string): ImageBlock | DocumentBlock | undefined {
  if (part.type === 'input_image') {
    const detail = readEnum(ctx, part, 'detail', path, IMAGE_DETAILS);
    const url = readString(ctx, part, 'image_url', path, { nonEmpty: true });
    if (url === undefined) {
      if (part.file_id != null)
        addIssue(
          ctx,
          at(path, 'file_id'),
          'unsupported',
          'uploaded files are not available through the gateway; send image_url',
        );
      else if (part.image_url == null) addIssue(ctx, at(path, 'image_url'), 'required', 'is required');
      return undefined;
    }
    const outcome = imageFromUrl(url, detail);
    if ('ok' in outcome) return outcome.ok;
    addIssue(ctx, at(path, 'image_url'), 'invalid_value', outcome.error);
    return undefined;
  }
  const filename = readString(ctx, part, 'filename', path);
  const fileData = readString(ctx, part, 'file_data', path);
  const fileUrl = readString(ctx, part, 'file_url', path);
  if (fileData !== undefined) {
    const outcome = documentFromFileData(fileData, filename);
    if ('ok' in outcome) return outcome.ok;
    addIssue(ctx, at(path, 'file_data'), 'invalid_value', outcome.error);
  } else if (fileUrl !== undefined) {
    const block: DocumentBlock = { type: 'document', source: { kind: 'url', url: fileUrl } };
    if (filename !== undefined) block.filename = filename;
    return block;
  } else if (part.file_id != null) {
    addIssue(
      ctx,
      at(path, 'file_id'),
      'unsupported',
      'uploaded files are not available through the gateway; send file_data or file_url',
    );
  } else {
    addIssue(ctx, at(path, 'file_data'), 'required', 'is required');
  }
  return undefined;
}

function parseOutput(ctx: ParseContext, item: JsonObject, path: string): ToolResultBlock['content'] {
  const output = item.output;
  const where = at(path, 'output');
  if (typeof output === 'string') return output === '' ? [] : [{ type: 'text', text: output }];
  if (!Array.isArray(output)) {
    if (output === undefined || output === null) addIssue(ctx, where, 'required', 'is required');
    else
      addIssue(
        ctx,
        where,
        'invalid_type',
        `expected a string or an array of content parts, received ${typeName(output)}`,
      );
    return [];
  }
  const content: ToolResultBlock['content'] = [];
  eachObject(ctx, output, where, (part, partPath) => {
    if (part.type === 'input_text' || part.type === 'output_text') {
      const text = readString(ctx, part, 'text', partPath, { required: true });
      if (text) content.push({ type: 'text', text });
    } else if (part.type === 'input_image' || part.type === 'input_file') {
      const block = parseInputMedia(ctx, part, partPath);
      if (block) content.push(block);
    } else {
      addIssue(ctx, at(partPath, 'type'), 'invalid_value', 'must be input_text, input_image or input_file');
    }
  });
  return content;
}

/** The visible text of a reasoning item: its summary, or its raw reasoning text when there is no summary. */
function reasoningText(ctx: ParseContext, item: JsonObject, path: string): string {
  const texts: string[] = [];
  for (const key of ['summary', 'content'] as const) {
    const list = item[key];
    if (list === undefined || list === null) continue;
    if (!Array.isArray(list)) {
      addIssue(ctx, at(path, key), 'invalid_type', `expected an array, received ${typeName(list)}`);
      continue;
    }
    if (texts.length > 0) break;
    for (const part of list) if (isObject(part) && typeof part.text === 'string') texts.push(part.text);
  }
  return texts.join('\n\n');
}
