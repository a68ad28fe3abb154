import fc from 'fast-check';
import {
  decideMcpAccess,
  listAllowedTools,
  listServerTools,
  qualifiedToolName,
  resolveServerToolCall,
  resolveToolCall,
  type McpAccessInputs,
  type NamedTool,
  type ToolServerRef,
} from './mcp-access';

// Small alphabets, so random keys, teams and grants collide often: shared slugs, shared tool names, globs that hit.
const TEAMS = ['org_1', 'org_2'];
const SLUGS = ['gh', 'db', 'everything', 'e-2'];
const TOOL_NAMES = ['echo', 'add', 'get_env', 'run__query', 'x'];

interface Server extends ToolServerRef {
  id: number;
  tools: NamedTool[];
}

const serverArb = fc.record({
  slug: fc.constantFrom(...SLUGS),
  tools: fc
    .uniqueArray(fc.constantFrom(...TOOL_NAMES), { maxLength: 4 })
    .map((names) => names.map((name) => ({ name }))),
});

// Globs built from the pieces real ones are made of: whole names, a server's every tool, wildcards, odd runs.
const globArb = fc.oneof(
  fc
    .tuple(fc.constantFrom(...SLUGS), fc.constantFrom(...TOOL_NAMES))
    .map(([slug, tool]) => qualifiedToolName(slug, tool)),
  fc.constantFrom(...SLUGS).map((slug) => `${slug}__*`),
  fc.constantFrom(...TOOL_NAMES).map((tool) => `*__${tool}`),
  fc.constantFrom('*', '', '__', '*_*', 'e*', '?b__*', 'gh__?dd', 'db__run__*', '*e*'),
  fc.stringMatching(/^[a-z_*?-]{0,8}$/),
);

const inputsArb = fc
  .record({
    orgId: fc.option(fc.constantFrom(...TEAMS), { nil: undefined }),
    allowedTools: fc.option(fc.array(globArb, { maxLength: 4 }), { nil: undefined }),
    accountServers: fc.array(serverArb, { maxLength: 5 }),
    poolServers: fc.array(serverArb, { maxLength: 5 }),
  })
  .map(({ orgId, allowedTools, accountServers, poolServers }) => {
    let id = 0;
    const withIds = (servers: Omit<Server, 'id'>[]) => servers.map((server) => ({ ...server, id: id++ }));
    const inputs: McpAccessInputs<Server> = {
      caller: { orgId, allowedTools },
      accountServers: withIds(accountServers),
      teamPool: withIds(poolServers),
    };
    return inputs;
  });

const toolsOf = (server: Server) => server.tools;

// Every name a caller might send: all slugs and tools combined, plus names of no shape at all.
const EVERY_NAME = [
  ...SLUGS.flatMap((slug) => [...TOOL_NAMES, 'missing'].map((tool) => qualifiedToolName(slug, tool))),
  'echo',
  '__echo',
  'gh__',
  'nobody__echo',
];

describe('the MCP access decision (property)', () => {
  it('a key can call exactly the tools it can list, at /mcp', () => {
    fc.assert(
      fc.property(inputsArb, (inputs) => {
        const access = decideMcpAccess(inputs);
        const listed = new Set(listAllowedTools(access, toolsOf).map((grant) => grant.qualifiedName));
        for (const name of EVERY_NAME) {
          const callable = !('refused' in resolveToolCall(access, name, toolsOf));
          expect({ name, callable }).toEqual({ name, callable: listed.has(name) });
        }
      }),
      { numRuns: 500 },
    );
  });

  it('a key can call exactly the tools it can list, at /mcp/{slug}, and they are the /mcp ones of that server', () => {
    fc.assert(
      fc.property(inputsArb, (inputs) => {
        const access = decideMcpAccess(inputs);
        const everywhere = listAllowedTools(access, toolsOf).map((grant) => grant.qualifiedName);
        for (const slug of [...SLUGS, 'nobody']) {
          const listed = listServerTools(access, slug, toolsOf).map((grant) => grant.tool.name);
          for (const tool of [...TOOL_NAMES, 'missing']) {
            const callable = !('refused' in resolveServerToolCall(access, slug, tool, toolsOf));
            expect({ slug, tool, callable }).toEqual({ slug, tool, callable: listed.includes(tool) });
          }
          expect(listed.map((tool) => qualifiedToolName(slug, tool))).toEqual(
            everywhere.filter((name) => name.startsWith(`${slug}__`)),
          );
        }
      }),
      { numRuns: 500 },
    );
  });

  it('what a key reaches is its own account’s servers, plus its team’s pool for a team key, one server a slug', () => {
    fc.assert(
      fc.property(inputsArb, (inputs) => {
        const { caller } = inputs;
        const reachable =
          caller.orgId === undefined ? inputs.accountServers : [...inputs.accountServers, ...inputs.teamPool!];
        const grants = listAllowedTools(decideMcpAccess(inputs), toolsOf);
        for (const grant of grants) {
          // The server a name means is the first reachable one with that slug: own before pool.
          expect(grant.server).toBe(reachable.find((server) => server.slug === grant.server.slug));
        }
      }),
      { numRuns: 500 },
    );
  });

  it('allowed_tools only narrows: every tool listed with globs is listed without them', () => {
    fc.assert(
      fc.property(inputsArb, (inputs) => {
        const narrowed = listAllowedTools(decideMcpAccess(inputs), toolsOf).map((grant) => grant.qualifiedName);
        const open = listAllowedTools(
          decideMcpAccess({ ...inputs, caller: { ...inputs.caller, allowedTools: undefined } }),
          toolsOf,
        ).map((grant) => grant.qualifiedName);
        for (const name of narrowed) expect(open).toContain(name);
      }),
      { numRuns: 500 },
    );
  });
});
