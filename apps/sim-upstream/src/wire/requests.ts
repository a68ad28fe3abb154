import { z } from 'zod';
import { SimError, type ErrorDialect } from './errors';

/**
 * Top-level request checks, lenient like a vendor that ignores what it does not use: unknown fields pass,
 * nested content is read leniently by the generator.
 */

const tokenLimit = z.number().int().min(0).nullish();
const message = z.looseObject({ role: z.string() });
const toolList = z.array(z.looseObject({})).nullish();
/** OpenAI's reasoning efforts today (its `ReasoningEffort`); any other value is a 400 there too. */
const effort = z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']).nullish();

export const chatRequestSchema = z.looseObject({
  model: z.string().min(1),
  messages: z.array(message).min(1),
  max_tokens: tokenLimit,
  max_completion_tokens: tokenLimit,
  stop: z.union([z.string(), z.array(z.string()).max(4)]).nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
  tools: toolList,
  tool_choice: z.unknown().optional(),
  reasoning_effort: effort,
});

export const responsesRequestSchema = z.looseObject({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(z.looseObject({}))]),
  instructions: z.string().nullish(),
  max_output_tokens: tokenLimit,
  stream: z.boolean().nullish(),
  tools: toolList,
  tool_choice: z.unknown().optional(),
  reasoning: z.looseObject({ effort, summary: z.enum(['auto', 'concise', 'detailed']).nullish() }).nullish(),
});
export type ResponsesRequest = z.infer<typeof responsesRequestSchema>;

/** `input_tokens` counting for Responses: the same body, everything but `model`/`input` optional. */
export const responsesCountSchema = z.looseObject({
  model: z.string().min(1).nullish(),
  input: z.union([z.string(), z.array(z.looseObject({}))]).nullish(),
  instructions: z.string().nullish(),
  tools: toolList,
});

const system = z.union([z.string(), z.array(z.looseObject({}))]).nullish();

export const messagesRequestSchema = z.looseObject({
  model: z.string().min(1),
  messages: z.array(message).min(1),
  max_tokens: z.number().int().min(0),
  system,
  stop_sequences: z.array(z.string()).nullish(),
  stream: z.boolean().nullish(),
  tools: toolList,
  tool_choice: z.unknown().optional(),
});

export const countTokensSchema = z.looseObject({
  model: z.string().min(1),
  messages: z.array(message).min(1),
  system,
  tools: toolList,
});

function paramName(path: PropertyKey[]): string {
  return path.reduce<string>(
    (name, key) => (typeof key === 'number' ? `${name}[${key}]` : name ? `${name}.${String(key)}` : String(key)),
    '',
  );
}

function valueAt(body: unknown, path: PropertyKey[]): unknown {
  let value = body;
  for (const key of path)
    value = value !== null && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[key] : undefined;
  return value;
}

/** Validates a JSON body, or throws a 400 SimError worded the way the dialect's vendor words it. */
export function parseRequest<S extends z.ZodType>(schema: S, body: unknown, dialect: ErrorDialect): z.output<S> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new SimError(
      400,
      dialect === 'anthropic' ? 'request body must be a JSON object' : 'The request body must be a JSON object.',
    );
  }
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue?.path ?? [];
  const param = paramName(path) || null;
  const missing = valueAt(body, path) === undefined;
  if (dialect === 'anthropic') {
    throw new SimError(
      400,
      `${param ?? 'body'}: ${missing ? 'Field required' : (issue?.message ?? 'invalid value')}`,
      param,
    );
  }
  throw new SimError(
    400,
    missing ? `Missing required parameter: '${param}'.` : `Invalid '${param}': ${issue?.message ?? 'invalid value'}.`,
    param,
    missing ? 'missing_required_parameter' : 'invalid_value',
  );
}
