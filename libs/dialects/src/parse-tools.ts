import type { ResponseFormat, ToolDefinition } from './ir';
import type { JsonObject } from './json';
import { readBoolean, readObject, readString, type ParseContext } from './parse-context';

/** Readers shared by the dialect parsers, whose tool and JSON-schema shapes differ only in nesting and key names. */

/** `{name, description?, <schemaKey>?, strict?}`: chat's nested function and Responses' flat tool alike. */
export function readFunctionTool(
  ctx: ParseContext,
  fn: JsonObject,
  path: string,
  schemaKey: string,
): ToolDefinition | undefined {
  const name = readString(ctx, fn, 'name', path, { required: true, nonEmpty: true });
  const description = readString(ctx, fn, 'description', path);
  const parameters = readObject(ctx, fn, schemaKey, path);
  const strict = readBoolean(ctx, fn, 'strict', path);
  if (name === undefined) return undefined;
  const tool: ToolDefinition = { name };
  if (description !== undefined) tool.description = description;
  if (parameters !== undefined) tool.parameters = parameters;
  if (strict !== undefined) tool.strict = strict;
  return tool;
}

/** `{name, schema?, description?, strict?}`: chat's `json_schema` object and Responses' flat `text.format`. */
export function readJsonSchemaFormat(ctx: ParseContext, spec: JsonObject, path: string): ResponseFormat | undefined {
  const name = readString(ctx, spec, 'name', path, { required: true, nonEmpty: true });
  // OpenAI lets the schema be omitted; an open object schema means the same and every upstream accepts it.
  const schema = readObject(ctx, spec, 'schema', path) ?? { type: 'object' };
  const description = readString(ctx, spec, 'description', path);
  const strict = readBoolean(ctx, spec, 'strict', path);
  if (name === undefined) return undefined;
  const format: ResponseFormat = { type: 'json_schema', name, schema };
  if (description !== undefined) format.description = description;
  if (strict !== undefined) format.strict = strict;
  return format;
}
