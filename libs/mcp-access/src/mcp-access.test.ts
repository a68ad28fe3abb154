import {
  decideMcpAccess,
  listAllowedTools,
  listServerTools,
  qualifiedToolName,
  resolveServerToolCall,
  resolveToolCall,
  splitQualifiedToolName,
  type McpAccessInputs,
  type NamedTool,
  type ToolServerRef,
} from './mcp-access';

interface Server extends ToolServerRef {
  id: string;
}

const server = (id: string, slug: string): Server => ({ id, slug });

const TOOLS: Record<string, NamedTool[]> = {
  a1: [{ name: 'echo' }, { name: 'add' }],
  a2: [{ name: 'search_issues' }, { name: 'create_issue' }],
  b1: [{ name: 'echo' }, { name: 'secret_dump' }],
  b2: [{ name: 'query' }],
};
const toolsOf = (s: Server) => TOOLS[s.id] ?? [];

const alice = { everything: server('a1', 'everything'), github: server('a2', 'github') };
const bob = { everything: server('b1', 'everything'), db: server('b2', 'db') };

const names = (inputs: McpAccessInputs<Server>) =>
  listAllowedTools(decideMcpAccess(inputs), toolsOf).map((grant) => grant.qualifiedName);

describe('qualified tool names', () => {
  it('are the slug and the tool joined by a double underscore, split at the first one', () => {
    expect(qualifiedToolName('github', 'search_issues')).toBe('github__search_issues');
    expect(splitQualifiedToolName('github__search_issues')).toEqual({ slug: 'github', tool: 'search_issues' });
    // A tool's own name may hold the separator: slugs cannot.
    expect(splitQualifiedToolName('db__run__query')).toEqual({ slug: 'db', tool: 'run__query' });
  });

  it('without a server or a tool are not names', () => {
    for (const name of ['echo', '__echo', 'github__', '', '__']) expect(splitQualifiedToolName(name)).toBeUndefined();
  });
});

describe('the servers a caller reaches', () => {
  it('a personal key reaches its own account servers', () => {
    const listed = names({ caller: {}, accountServers: [alice.everything, alice.github] });
    expect(listed).toEqual(['everything__echo', 'everything__add', 'github__search_issues', 'github__create_issue']);
  });

  it('a personal key does not reach a team pool', () => {
    const listed = names({ caller: {}, accountServers: [], teamPool: [bob.db] });
    expect(listed).toEqual([]);
  });

  it('a team key reaches its own servers and its team’s pool', () => {
    const listed = names({ caller: { orgId: 'org_1' }, accountServers: [alice.github], teamPool: [bob.db] });
    expect(listed).toEqual(['github__search_issues', 'github__create_issue', 'db__query']);
  });

  it('a pooled server under a slug of the caller’s own is shadowed by the caller’s own', () => {
    const access = decideMcpAccess({
      caller: { orgId: 'org_1' },
      accountServers: [alice.everything],
      teamPool: [bob.everything, bob.db],
    });
    expect(access.servers).toEqual([alice.everything, bob.db]);
    expect(resolveToolCall(access, 'everything__secret_dump', toolsOf)).toEqual({ refused: 'unknown_tool' });
  });
});

describe('allowed_tools', () => {
  const caller = (allowedTools?: string[] | null) => ({
    caller: { allowedTools },
    accountServers: [alice.everything, alice.github],
  });

  it('absent (undefined or null) allows every tool', () => {
    expect(names(caller(undefined))).toHaveLength(4);
    expect(names(caller(null))).toHaveLength(4);
  });

  it('empty allows none', () => {
    expect(names(caller([]))).toEqual([]);
  });

  it('a server glob allows that server’s tools', () => {
    expect(names(caller(['github__*']))).toEqual(['github__search_issues', 'github__create_issue']);
  });

  it('globs match the qualified name, across servers', () => {
    expect(names(caller(['*__echo', 'github__create_?ssue']))).toEqual(['everything__echo', 'github__create_issue']);
  });

  it('an exact name allows exactly that tool, case-sensitively', () => {
    expect(names(caller(['everything__add']))).toEqual(['everything__add']);
    expect(names(caller(['everything__Add', 'Everything__add']))).toEqual([]);
  });

  it('never widens: a glob naming a server the caller does not reach gives nothing', () => {
    expect(names(caller(['db__*', '*']))).not.toContain('db__query');
  });
});

describe('calling a tool', () => {
  const access = decideMcpAccess({
    caller: { allowedTools: ['everything__*'] },
    accountServers: [alice.everything, alice.github],
  });

  it('an allowed, listed tool resolves to its server and own name', () => {
    const call = resolveToolCall(access, 'everything__echo', toolsOf);
    expect(call).toEqual({ server: alice.everything, tool: { name: 'echo' }, qualifiedName: 'everything__echo' });
  });

  it('a tool the globs leave out is refused as a tool the server does not have', () => {
    expect(resolveToolCall(access, 'github__create_issue', toolsOf)).toEqual({ refused: 'unknown_tool' });
    expect(resolveToolCall(access, 'everything__nope', toolsOf)).toEqual({ refused: 'unknown_tool' });
  });

  it('another account’s server is refused as a server that does not exist', () => {
    expect(resolveToolCall(access, 'db__query', toolsOf)).toEqual({ refused: 'unknown_server' });
  });

  it('a name that is not <server>__<tool> is refused as malformed', () => {
    expect(resolveToolCall(access, 'echo', toolsOf)).toEqual({ refused: 'malformed_name' });
  });

  it('at /mcp/{slug} a tool goes by its own name, under the same globs', () => {
    expect(resolveServerToolCall(access, 'everything', 'add', toolsOf)).toMatchObject({
      qualifiedName: 'everything__add',
    });
    expect(resolveServerToolCall(access, 'github', 'create_issue', toolsOf)).toEqual({ refused: 'unknown_tool' });
    expect(listServerTools(access, 'everything', toolsOf).map((grant) => grant.tool.name)).toEqual(['echo', 'add']);
    expect(listServerTools(access, 'github', toolsOf)).toEqual([]);
    expect(listServerTools(access, 'db', toolsOf)).toEqual([]);
  });
});
