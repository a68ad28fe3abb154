import { dropField } from '../dropped-fields';
import type { AssistantBlock, DocumentBlock, ImageBlock, TextBlock, ToolResultBlock, UserBlock } from '../ir';
import { isObject, type JsonObject } from '../json';
import {
  addIssue,
  at,
  eachObject,
  readBoolean,
  readObject,
  readString,
  typeName,
  type ParseContext,
} from '../parse-context';
import { stringifyToolInput } from '../tool-arguments';

/** Anthropic content blocks (dialects.md §4.2) into neutral blocks. */

type Media = TextBlock | ImageBlock | DocumentBlock;

/** Server-tool blocks and search results: results of tools the gateway does not route. */
const SERVER_BLOCKS = new Set(['server_tool_use', 'mcp_tool_use', 'container_upload', 'search_result']);
const isServerBlock = (type: string): boolean => SERVER_BLOCKS.has(type) || type.endsWith('_tool_result');

/** Block content common to both roles: string or block array; `visit` turns one block into neutral blocks. */
function eachBlock(
  ctx: ParseContext,
  item: JsonObject,
  path: string,
  visit: (block: JsonObject, type: string, blockPath: string) => void,
): void {
  const content = item.content;
  const where = at(path, 'content');
  if (!Array.isArray(content)) {
    if (content === undefined || content === null) addIssue(ctx, where, 'required', 'is required');
    else
      addIssue(
        ctx,
        where,
        'invalid_type',
        `expected a string or an array of content blocks, received ${typeName(content)}`,
      );
    return;
  }
  eachObject(ctx, content, where, (block, blockPath) => {
    if (block.cache_control != null) dropField(ctx, 'messages', 'cache_control');
    if (block.citations != null) dropField(ctx, 'messages', 'messages.*.content.*.citations');
    const type = block.type;
    if (typeof type !== 'string') {
      addIssue(ctx, at(blockPath, 'type'), 'required', 'is required');
      return;
    }
    if (isServerBlock(type)) dropField(ctx, 'messages', 'messages.*.content.*[server]');
    else visit(block, type, blockPath);
  });
}

export function parseUserBlocks(ctx: ParseContext, item: JsonObject, path: string): UserBlock[] {
  if (typeof item.content === 'string') return [{ type: 'text', text: item.content }];
  const blocks: UserBlock[] = [];
  eachBlock(ctx, item, path, (block, type, blockPath) => {
    if (type === 'tool_result') {
      const result = parseToolResult(ctx, block, blockPath);
      if (result) blocks.push(result);
      return;
    }
    const media = parseMedia(ctx, block, type, blockPath);
    if (media) blocks.push(...media);
    else if (media === null)
      addIssue(
        ctx,
        at(blockPath, 'type'),
        'invalid_value',
        'must be one of text, image, document, tool_result in a user message',
      );
  });
  return blocks;
}

export function parseAssistantBlocks(ctx: ParseContext, item: JsonObject, path: string): AssistantBlock[] {
  if (typeof item.content === 'string') return item.content === '' ? [] : [{ type: 'text', text: item.content }];
  const blocks: AssistantBlock[] = [];
  eachBlock(ctx, item, path, (block, type, blockPath) => {
    switch (type) {
      case 'text': {
        const text = readString(ctx, block, 'text', blockPath, { required: true });
        if (text) blocks.push({ type: 'text', text });
        return;
      }
      case 'tool_use': {
        const id = readString(ctx, block, 'id', blockPath, { required: true, nonEmpty: true });
        const name = readString(ctx, block, 'name', blockPath, { required: true, nonEmpty: true });
        const input = readObject(ctx, block, 'input', blockPath, true);
        if (id !== undefined && name !== undefined && input !== undefined)
          blocks.push({ type: 'tool_call', id, name, arguments: stringifyToolInput(input) });
        return;
      }
      case 'thinking': {
        const text = readString(ctx, block, 'thinking', blockPath, { required: true });
        const signature = readString(ctx, block, 'signature', blockPath);
        if (text === undefined) return;
        // An empty signature proves nothing; the block then counts as unsigned and is not replayed as thinking.
        blocks.push(
          signature
            ? { type: 'reasoning', text, signature, origin: 'anthropic' }
            : { type: 'reasoning', text, origin: 'anthropic' },
        );
        return;
      }
      case 'redacted_thinking': {
        const data = readString(ctx, block, 'data', blockPath, { required: true, nonEmpty: true });
        if (data !== undefined) blocks.push({ type: 'reasoning', text: '', redacted: data, origin: 'anthropic' });
        return;
      }
      default:
        addIssue(
          ctx,
          at(blockPath, 'type'),
          'invalid_value',
          'must be one of text, tool_use, thinking, redacted_thinking in an assistant message',
        );
    }
  });
  return blocks;
}

function parseToolResult(ctx: ParseContext, block: JsonObject, path: string): ToolResultBlock | undefined {
  const callId = readString(ctx, block, 'tool_use_id', path, { required: true, nonEmpty: true });
  const isError = readBoolean(ctx, block, 'is_error', path);
  const content: ToolResultBlock['content'] = [];
  if (typeof block.content === 'string') {
    if (block.content !== '') content.push({ type: 'text', text: block.content });
  } else if (block.content !== undefined && block.content !== null) {
    eachBlock(ctx, block, path, (part, type, partPath) => {
      const media = parseMedia(ctx, part, type, partPath);
      if (media) content.push(...media.filter((b) => b.type !== 'text' || b.text !== ''));
      else if (media === null)
        addIssue(ctx, at(partPath, 'type'), 'invalid_value', 'must be one of text, image, document');
    });
  }
  if (callId === undefined) return undefined;
  const result: ToolResultBlock = { type: 'tool_result', callId, content };
  if (isError) result.isError = true;
  return result;
}

/**
 * Text, image and document blocks. Returns `null` for a type that is none of them (the caller words the
 * issue for its role) and `undefined` when the block was one of them but invalid (already reported).
 */
function parseMedia(ctx: ParseContext, block: JsonObject, type: string, path: string): Media[] | null | undefined {
  switch (type) {
    case 'text': {
      const text = readString(ctx, block, 'text', path, { required: true });
      return text === undefined ? undefined : [{ type: 'text', text }];
    }
    case 'image': {
      const source = parseSource(ctx, block, path, 'image');
      return source && [{ type: 'image', source }];
    }
    case 'document':
      return parseDocument(ctx, block, path);
    default:
      return null;
  }
}

function parseSource(
  ctx: ParseContext,
  block: JsonObject,
  path: string,
  kind: 'image' | 'document',
): ImageBlock['source'] | undefined {
  const source = readObject(ctx, block, 'source', path, true);
  if (!source) return undefined;
  const where = at(path, 'source');
  switch (source.type) {
    case 'base64': {
      const mediaType = readString(ctx, source, 'media_type', where, { required: true, nonEmpty: true });
      const data = readString(ctx, source, 'data', where, { required: true, nonEmpty: true });
      return mediaType === undefined || data === undefined ? undefined : { kind: 'base64', mediaType, data };
    }
    case 'url': {
      const url = readString(ctx, source, 'url', where, { required: true, nonEmpty: true });
      return url === undefined ? undefined : { kind: 'url', url };
    }
    case 'file':
      addIssue(
        ctx,
        at(where, 'type'),
        'unsupported',
        'uploaded files are not available through the gateway; send the data inline',
      );
      return undefined;
    default:
      addIssue(
        ctx,
        at(where, 'type'),
        'invalid_value',
        kind === 'image' ? 'must be base64 or url' : 'must be base64, url, text or content',
      );
      return undefined;
  }
}

/** Plain-text and content-block documents become text: only PDFs and URLs have a document form elsewhere. */
function parseDocument(ctx: ParseContext, block: JsonObject, path: string): Media[] | undefined {
  if (block.context != null) dropField(ctx, 'messages', 'messages.*.content.*.context');
  const title = readString(ctx, block, 'title', path);
  const source = isObject(block.source) ? block.source : undefined;
  const where = at(path, 'source');
  if (source?.type === 'text') {
    const data = readString(ctx, source, 'data', where, { required: true });
    return data === undefined ? undefined : [{ type: 'text', text: data }];
  }
  if (source?.type === 'content') {
    if (typeof source.content === 'string') return [{ type: 'text', text: source.content }];
    const texts: Media[] = [];
    eachBlock(ctx, source, where, (part, type, partPath) => {
      const media = parseMedia(ctx, part, type, partPath);
      if (media) texts.push(...media);
      else if (media === null) addIssue(ctx, at(partPath, 'type'), 'invalid_value', 'must be text or image');
    });
    return texts;
  }
  const parsed = parseSource(ctx, block, path, 'document');
  if (!parsed) return undefined;
  const document: DocumentBlock = { type: 'document', source: parsed };
  if (title !== undefined) document.filename = title;
  return [document];
}
