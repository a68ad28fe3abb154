import type { PrismaClient as RunsDb } from '../generated/prisma/client';
import { recordExchange } from '../store/exchanges';
import { workspacePathProblem } from '../store/workspace-path';
import { listWorkspaceFiles, readWorkspaceFile, WORKSPACE_LIMITS, writeWorkspaceFile } from '../store/workspace';
import type { Egress } from './egress';
import { redactExchange } from './redact';

/** What a tool call may touch: its run's project workspace, and the network through the egress filter. */
export interface ToolContext {
  db: RunsDb;
  egress: Egress;
  runId: string;
  projectId: string;
  fetchTimeoutMs: number;
  signal: AbortSignal;
  /** Whose run this is, for the egress policy. */
  dialAs: 'operator' | 'tenant';
}

export interface ToolOutcome {
  ok: boolean;
  /** What the model reads back: JSON text. */
  output: string;
}

const FETCH_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'];
// The model reads at most this much of a fetched body; the recorded exchange keeps up to the redactor's cap.
const FETCH_BODY_FOR_MODEL = 16 * 1024;
const FETCH_BODY_BYTES = 256 * 1024;

/** The tools declared to the model (chat-completions `tools`). */
export const TOOL_DEFINITIONS = [
  {
    type: 'function',
    function: {
      name: 'list_files',
      description: "List the files in the project's workspace.",
      parameters: { type: 'object', properties: {}, additionalProperties: false },
    },
  },
  {
    type: 'function',
    function: {
      name: 'read_file',
      description: 'Read a file of the workspace.',
      parameters: {
        type: 'object',
        properties: { path: { type: 'string' } },
        required: ['path'],
        additionalProperties: false,
      },
    },
  },
  {
    type: 'function',
    function: {
      name: 'write_file',
      description: 'Create or replace a file of the workspace.',
      parameters: {
        type: 'object',
        properties: { path: { type: 'string' }, content: { type: 'string' } },
        required: ['path', 'content'],
        additionalProperties: false,
      },
    },
  },
  {
    type: 'function',
    function: {
      name: 'fetch_url',
      description: 'Make an HTTP request and read the answer. Redirects are not followed.',
      parameters: {
        type: 'object',
        properties: {
          url: { type: 'string', description: 'http or https URL' },
          method: { type: 'string', enum: FETCH_METHODS },
          headers: { type: 'object', additionalProperties: { type: 'string' } },
          body: { type: 'string' },
        },
        required: ['url'],
        additionalProperties: false,
      },
    },
  },
] as const;

const fail = (message: string): ToolOutcome => ({ ok: false, output: JSON.stringify({ error: message }) });
const succeed = (value: unknown): ToolOutcome => ({ ok: true, output: JSON.stringify(value) });

function parseArguments(json: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(json || '{}') as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

async function fetchUrl(ctx: ToolContext, args: Record<string, unknown>): Promise<ToolOutcome> {
  let url: URL;
  try {
    url = new URL(String(args.url));
  } catch {
    return fail('url must be an absolute http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return fail('url must be an absolute http or https URL');
  const method = typeof args.method === 'string' ? args.method.toUpperCase() : 'GET';
  if (!FETCH_METHODS.includes(method)) return fail(`method must be one of ${FETCH_METHODS.join(', ')}`);
  const headers: Record<string, string> = { 'user-agent': 'sbc-runs/1' };
  if (args.headers !== null && typeof args.headers === 'object') {
    for (const [name, value] of Object.entries(args.headers))
      if (typeof value === 'string') headers[name.toLowerCase()] = value;
  }
  const body = typeof args.body === 'string' && method !== 'GET' && method !== 'HEAD' ? args.body : undefined;
  const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(ctx.fetchTimeoutMs)]);
  try {
    const reply = await ctx.egress.send({
      url,
      method,
      headers,
      body,
      signal,
      maxBodyBytes: FETCH_BODY_BYTES,
      dialAs: ctx.dialAs,
    });
    await recordExchange(
      ctx.db,
      ctx.runId,
      redactExchange({
        method,
        url: url.toString(),
        status: reply.status,
        time: new Date().toISOString(),
        request: { headers, body },
        response: { headers: reply.headers, body: reply.truncated ? undefined : reply.body },
      }),
    );
    const contentType = reply.headers['content-type'];
    return succeed({
      status: reply.status,
      content_type: Array.isArray(contentType) ? contentType[0] : contentType,
      body: reply.body.slice(0, FETCH_BODY_FOR_MODEL),
      truncated: reply.truncated || reply.body.length > FETCH_BODY_FOR_MODEL,
    });
  } catch (error) {
    if (ctx.signal.aborted) throw error;
    const code = (error as { code?: string }).code;
    if (code === 'EGRESS_DENIED') return fail((error as Error).message);
    return fail(`the request failed${code ? ` (${code})` : ''}`);
  }
}

/** Runs one tool call. A bad call is a failed outcome the model can read, never an exception. */
export async function runTool(ctx: ToolContext, name: string, argumentsJson: string): Promise<ToolOutcome> {
  const args = parseArguments(argumentsJson);
  if (!args) return fail('arguments must be a JSON object');
  switch (name) {
    case 'list_files':
      return succeed({ files: await listWorkspaceFiles(ctx.db, ctx.projectId) });
    case 'read_file': {
      if (typeof args.path !== 'string') return fail('path must be a string');
      const problem = workspacePathProblem(args.path);
      if (problem) return fail(problem);
      const content = await readWorkspaceFile(ctx.db, ctx.projectId, args.path);
      return content === undefined ? fail(`no file ${args.path}`) : succeed({ path: args.path, content });
    }
    case 'write_file': {
      if (typeof args.path !== 'string') return fail('path must be a string');
      // The rule the API reads files by, so the agent never writes a file its owner cannot open.
      const problem = workspacePathProblem(args.path);
      if (problem) return fail(problem);
      if (typeof args.content !== 'string') return fail('content must be a string');
      if (Buffer.byteLength(args.content) > WORKSPACE_LIMITS.fileBytes)
        return fail(`content must be at most ${WORKSPACE_LIMITS.fileBytes} bytes`);
      const written = await writeWorkspaceFile(ctx.db, ctx.projectId, args.path, args.content);
      return written
        ? succeed({ path: args.path, bytes: Buffer.byteLength(args.content) })
        : fail(`the workspace holds at most ${WORKSPACE_LIMITS.files} files`);
    }
    case 'fetch_url':
      return fetchUrl(ctx, args);
    default:
      return fail(`no tool named ${name}`);
  }
}
