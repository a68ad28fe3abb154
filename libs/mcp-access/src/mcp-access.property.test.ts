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
const USERS = ['usr_a', 'usr_b', 'usr_c'];
const TEAMS = ['org_1', 'org_2'];
const SLUGS = ['gh', 'db', 'everything', 'e-2'];
const TOOL_NAMES = ['echo', 'add', 'get_env', 'run__query', 'x'];

interface Server extends ToolServerRef {
  id: number;
  tools: NamedTool[];
}

const serverArb = fc.record({
  slug: fc.constantFrom(...SLUGS),
  ownerUserId: fc.constantFrom(...USERS),
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
    userId: fc.constantFrom(...USERS),
    orgId: fc.option(fc.constantFrom(...TEAMS), { nil: undefined }),
    allowedTools: fc.option(fc.array(globArb, { maxLength: 4 }), { nil: undefined }),
    accountServers: fc.array(serverArb, { maxLength: 5 }),
    poolOrg: fc.constantFrom(...TEAMS),
    poolServers: fc.array(serverArb, { maxLength: 5 }),
  })
  .map(({ userId, orgId, allowedTools, accountServers, poolOrg, poolServers }) => {
    let id = 0;
    const withIds = (servers: Omit<Server, 'id'>[]) => servers.map((server) => ({ ...server, id: id++ }));
    const inputs: McpAccessInputs<Server> = {
      caller: { userId, orgId, allowedTools },
      accountServers: withIds(accountServers),
      teamPool: { orgId: poolOrg, servers: withIds(poolServers) },
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

  it('what a key reaches is its own account’s servers, or its own team’s pool, never anyone else’s', () => {
    fc.assert(
      fc.property(inputsArb, (inputs) => {
        const { caller } = inputs;
        const allowed =
          caller.orgId === undefined
            ? inputs.accountServers.filter((server) => server.ownerUserId === caller.userId)
            : inputs.teamPool?.orgId === caller.orgId
              ? inputs.teamPool.servers
              : [];
        for (const grant of listAllowedTools(decideMcpAccess(inputs), toolsOf)) expect(allowed).toContain(grant.server);
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
