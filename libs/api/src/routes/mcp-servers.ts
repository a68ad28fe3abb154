import { z } from 'zod';
import { DateTime, listOf, NO_CONTENT, pageQuery } from '../common';
import { defineRoute } from '../route';

const TOOL_SERVERS = 'MCP tool servers';

/** The probe's limit for connect, `initialize` and every `tools/list` page (apps/account PROBE_TIMEOUT_MS). */
const PROBE_TIMEOUT_S = 5;
/** Bounds of a server's credentials (apps/account store/mcp-servers.ts checks the same). */
const MAX_HEADERS = 32;
const MAX_HEADER_VALUE_LENGTH = 8_192;
const MAX_BEARER_LENGTH = 8_192;

// RFC 9110 token characters: anything else cannot be sent as a header name.
const HeaderName = z
  .string()
  .max(256)
  .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'Not a valid header name.');
// A value that could split a header line is refused rather than sent.
const HeaderValue = z
  .string()
  .max(MAX_HEADER_VALUE_LENGTH)
  .regex(/^[^\r\n\0]*$/, 'A header value holds no line break or NUL.');
const Headers = z
  .record(HeaderName, HeaderValue)
  .refine((headers) => Object.keys(headers).length <= MAX_HEADERS, `At most ${MAX_HEADERS} headers.`)
  .meta({ description: `Sent with every request to the server; values stored encrypted. At most ${MAX_HEADERS}.` });
const BearerToken = z
  .string()
  .max(MAX_BEARER_LENGTH)
  .regex(/^[^\r\n\0]*$/, 'A token holds no line break or NUL.')
  .meta({
    description:
      'Sent as `Authorization: Bearer <token>` (over any `authorization` header); stored encrypted, never returned. ' +
      'An empty string removes it.',
  });
const Slug = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]{0,47}$/, 'A slug is 1-48 of a-z, 0-9 and "-", starting with a letter or digit.')
  .meta({ description: "The server's id on the account: its tools are named `<slug>__<tool>` at `/mcp`." });
const ServerUrl = z
  .url({ protocol: /^https?$/ })
  .max(2_048)
  .meta({
    description: "The server's MCP endpoint, speaking MCP's Streamable HTTP transport (e.g. `https://host/mcp`).",
  });
const Label = z.string().trim().min(1).max(128);

export const McpTool = z
  .object({ name: z.string(), description: z.string().optional() })
  .loose()
  .meta({ id: 'McpTool' });

export const McpServerProbe = z
  .object({
    ok: z.boolean(),
    tools_found: z.number().int().optional().meta({ description: 'How many tools `tools/list` answered.' }),
    error: z
      .string()
      .optional()
      .meta({ description: 'Why the probe failed, in words (refused, timed out, the HTTP status, an MCP error).' }),
    at: z.string().optional().meta({ description: 'When the probe ran (date-time).' }),
    server_name: z.string().optional().meta({ description: 'The name the server gave in `initialize`.' }),
    server_version: z.string().optional(),
    protocol_version: z.string().optional().meta({ description: 'The MCP protocol version both sides agreed on.' }),
  })
  .loose()
  .meta({ id: 'McpServerProbe' });

export const McpServer = z
  .object({
    id: z.string().meta({ description: 'The row id (`mcp_…`): the cursor of the list.' }),
    object: z.literal('mcp_server'),
    slug: z.string(),
    label: z.string(),
    url: z.string(),
    headers: z
      .record(z.string(), z.string())
      .meta({ description: 'The header names sent to the server; every value is shown as `••••`.' }),
    has_bearer_token: z.boolean(),
    tools: z.array(McpTool).meta({ description: 'What the last answered probe listed.' }),
    probe: McpServerProbe.optional().meta({ description: 'The last probe report; absent when never probed.' }),
    probed_at: DateTime.optional().meta({ description: 'When the server last answered a probe.' }),
    created_at: DateTime,
    updated_at: DateTime,
  })
  .loose()
  .meta({ id: 'McpServer', description: 'An MCP tool server. Header values and the bearer token are never returned.' });

export const McpServerWithProbe = z
  .object({
    server: McpServer,
    probe: McpServerProbe.meta({ description: 'The probe just run, or the last one when none ran.' }),
  })
  .loose()
  .meta({ id: 'McpServerWithProbe' });

export const McpServerList = z
  .object({
    object: z.literal('list'),
    data: z.array(McpServer),
    has_more: z.boolean(),
    first_id: z.string().nullable().meta({ description: 'Pass as before_id for the previous page.' }),
    last_id: z.string().nullable().meta({ description: 'Pass as after_id for the next page.' }),
  })
  .loose()
  .meta({ id: 'McpServerList' });

const SlugParams = z.object({ slug: z.string().min(1).max(64).meta({ description: 'The tool server slug.' }) });

const PROBING =
  `A probe speaks MCP to the server with the official SDK's client over Streamable HTTP: \`initialize\`, then ` +
  `every page of \`tools/list\`, then it ends the session. It gets ${PROBE_TIMEOUT_S} s in all. An answered probe ` +
  `replaces \`tools\`; a failed one changes only the report (\`probe.ok\` false with the reason).`;

const EGRESS =
  'A `url` the egress policy refuses for the caller is 400 `invalid_request` (param `url`), as for custom endpoints: ' +
  'link-local, documentation and other special ranges and the gateway itself for everyone; loopback and private ' +
  'addresses unless the caller is an operator (`EGRESS_PRIVATE`). The same check runs whenever the server is dialed.';

export const listMcpServers = defineRoute({
  operationId: 'listMcpServers',
  method: 'get',
  path: '/v1/mcp/servers',
  summary: 'List MCP tool servers',
  description: "The account's tool servers, newest first; `after_id` / `before_id` take the row `id` (`mcp_…`).",
  tag: TOOL_SERVERS,
  auth: { kind: 'scoped', scopes: ['endpoints:read'] },
  query: pageQuery(),
  responses: { 200: { description: 'A page of tool servers.', schema: McpServerList } },
});

export const createMcpServer = defineRoute({
  operationId: 'createMcpServer',
  rateCost: 10,
  method: 'post',
  path: '/v1/mcp/servers',
  summary: 'Add an MCP tool server and probe it',
  description:
    `Saves the server, then probes it; a failed probe still saves. The slug is derived from the label ` +
    `(lowercase, dashes; \`-2\`, \`-3\`… when taken); \`slug\` asks for one outright (409 when taken). ${EGRESS} ` +
    PROBING,
  tag: TOOL_SERVERS,
  auth: { kind: 'scoped', scopes: ['endpoints:write'] },
  body: z
    .strictObject({
      label: Label,
      url: ServerUrl,
      headers: Headers.optional(),
      bearer_token: BearerToken.optional(),
      slug: Slug.optional(),
    })
    .meta({ id: 'McpServerCreate' }),
  responses: { 201: { description: 'The saved server and its probe report.', schema: McpServerWithProbe } },
  errors: [409],
});

export const getMcpServer = defineRoute({
  operationId: 'getMcpServer',
  method: 'get',
  path: '/v1/mcp/servers/{slug}',
  summary: 'Get an MCP tool server',
  description: 'One tool server of the account, with the tools its last answered probe listed.',
  tag: TOOL_SERVERS,
  auth: { kind: 'scoped', scopes: ['endpoints:read'] },
  params: SlugParams,
  responses: { 200: { description: 'The tool server.', schema: McpServer } },
  errors: [404],
});

export const updateMcpServer = defineRoute({
  operationId: 'updateMcpServer',
  rateCost: 10,
  method: 'patch',
  path: '/v1/mcp/servers/{slug}',
  summary: 'Edit an MCP tool server',
  description:
    `Absent fields keep what is stored; \`headers\` replaces every stored header. When the dial changed (\`url\`, ` +
    `\`headers\` or \`bearer_token\` differ from what is stored) the server is re-probed; otherwise \`probe\` is the ` +
    `last report. ${PROBING}`,
  tag: TOOL_SERVERS,
  auth: { kind: 'scoped', scopes: ['endpoints:write'] },
  params: SlugParams,
  body: z
    .strictObject({
      label: Label.optional(),
      url: ServerUrl.optional(),
      headers: Headers.optional(),
      bearer_token: BearerToken.optional(),
    })
    .meta({ id: 'McpServerUpdate' }),
  responses: { 200: { description: 'The edited server and its last probe.', schema: McpServerWithProbe } },
  errors: [404],
});

export const deleteMcpServer = defineRoute({
  operationId: 'deleteMcpServer',
  method: 'delete',
  path: '/v1/mcp/servers/{slug}',
  summary: 'Remove an MCP tool server',
  description: 'Removes the server and its stored credentials; its tools leave `/mcp` at once, on every edge.',
  tag: TOOL_SERVERS,
  auth: { kind: 'scoped', scopes: ['endpoints:write'] },
  params: SlugParams,
  responses: { 204: NO_CONTENT },
  errors: [404],
});

export const probeMcpServer = defineRoute({
  operationId: 'probeMcpServer',
  rateCost: 10,
  method: 'post',
  path: '/v1/mcp/servers/{slug}/probe',
  summary: 'Probe an MCP tool server',
  description: `Dials the stored server and stores the tools it lists. A failed probe is still 200. ${PROBING}`,
  tag: TOOL_SERVERS,
  auth: { kind: 'scoped', scopes: ['endpoints:write'] },
  params: SlugParams,
  responses: { 200: { description: 'The server and the probe just run.', schema: McpServerWithProbe } },
  errors: [404],
});

export const TeamToolServer = z
  .object({
    id: z.string().meta({ description: 'The row id (`mcp_…`): the cursor of the list.' }),
    object: z.literal('team_mcp_server'),
    slug: z.string().meta({ description: 'Its tools are named `<slug>__<tool>` at `/mcp` for a team key.' }),
    label: z.string(),
    url: z.string(),
    tools: z.array(McpTool).meta({ description: 'What the last answered probe listed.' }),
    updated_at: DateTime,
    shared_by: z
      .object({ user_id: z.string(), email: z.string() })
      .loose()
      .meta({ description: 'The member whose server it is.' }),
  })
  .loose()
  .meta({
    id: 'TeamMcpServer',
    description: "A server of a team's pool. Its headers and bearer token are never shown, not even their names.",
  });

export const listTeamMcpServers = defineRoute({
  operationId: 'listTeamMcpServers',
  method: 'get',
  path: '/v1/teams/{team_id}/mcp/servers',
  summary: "List a team's MCP tool-server pool",
  description:
    "The team's pool, the tool servers its team keys see at `/mcp` besides their user's own: those of every member " +
    'who pools them (`share_defaults.mcp` when they joined) and whose role `share_policy` allows. Any member may ' +
    'list it, newest first; `after_id` / `before_id` take the row `id`. When two members share servers with one ' +
    "slug, a team key uses the older, and a key's own server of that slug wins. A caller who is not a member gets 404.",
  tag: TOOL_SERVERS,
  auth: { kind: 'scoped', scopes: ['teams:read'] },
  params: z.object({ team_id: z.string().min(1).max(100).meta({ description: 'The team id (`org_…`).' }) }),
  query: pageQuery(),
  responses: {
    200: { description: "A page of the team's pool.", schema: listOf(TeamToolServer, 'TeamMcpServerList') },
  },
  errors: [404],
});

export const MCP_SERVER_ROUTES = [
  listMcpServers,
  createMcpServer,
  getMcpServer,
  updateMcpServer,
  deleteMcpServer,
  probeMcpServer,
  listTeamMcpServers,
];
