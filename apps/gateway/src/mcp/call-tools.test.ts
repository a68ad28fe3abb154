import type { McpToolSet } from '@sbc/dialects';
import { ApiError } from '@sbc/errors';
import { decideMcpAccess } from '@sbc/mcp-access';
import { resolveToolSets, textOf } from './call-tools';
import type { McpToolServer } from './tool-server-source';

const server = (slug: string, url: string, source: 'account' | 'team' = 'account'): McpToolServer => ({
  slug,
  label: slug,
  url,
  headers: { authorization: 'Bearer stored' },
  source,
  dialAs: 'tenant',
});

const mine = server('everything', 'https://tools.example.com/mcp');
const pooled = server('github', 'https://github-mcp.example.com/mcp', 'team');

const set = (label: string, url?: string): McpToolSet => ({
  label,
  ...(url === undefined ? {} : { url }),
  params: { label: 'tools.0.server_label', url: 'tools.0.server_url' },
});

const personal = decideMcpAccess({ caller: {}, accountServers: [mine], teamPool: [pooled] });
const team = decideMcpAccess({ caller: { orgId: 'org_1' }, accountServers: [mine], teamPool: [pooled] });

function refusal(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return error;
  }
  throw new Error('expected an ApiError');
}

describe('which tool server a model call’s MCP tool names', () => {
  it('a label names the caller’s server by its slug', () => {
    expect(resolveToolSets(personal, [set('everything')])).toEqual([{ set: set('everything'), server: mine }]);
  });

  it('a URL names the caller’s server registered at it, whatever the label, written in any equivalent form', () => {
    const byUrl = set('my-tools', 'HTTPS://tools.example.com:443/mcp');
    expect(resolveToolSets(personal, [byUrl])).toEqual([{ set: byUrl, server: mine }]);
  });

  it('a team key names its team pool’s servers; a personal key does not reach them', () => {
    expect(resolveToolSets(team, [set('github')])[0]!.server).toBe(pooled);
    const error = refusal(() => resolveToolSets(personal, [set('github')]));
    expect(error).toMatchObject({ code: 'invalid_request', status: 400, param: 'tools.0.server_label' });
  });

  it('an unknown label is a 400 naming the field, as another account’s server is', () => {
    const error = refusal(() => resolveToolSets(personal, [set('someone-elses')]));
    expect(error).toMatchObject({ code: 'invalid_request', param: 'tools.0.server_label' });
    expect(error.message).toContain('No tool server "someone-elses" for this key');
  });

  it('a URL that is not a registered server is a 400 naming the field: the gateway is no open egress', () => {
    const error = refusal(() => resolveToolSets(personal, [set('everything', 'http://169.254.169.254/mcp')]));
    expect(error).toMatchObject({ code: 'invalid_request', param: 'tools.0.server_url' });
    expect(error.message).toContain('POST /v1/mcp/servers');
  });

  it('two sets naming one server offer it once', () => {
    const resolved = resolveToolSets(personal, [set('everything'), set('again', mine.url)]);
    expect(resolved.map(({ server: found }) => found.slug)).toEqual(['everything']);
  });
});

describe('a tool result as a model reads it', () => {
  it('is its text parts, and what its other parts are', () => {
    expect(
      textOf({
        content: [
          { type: 'text', text: 'one' },
          { type: 'image', data: 'AAAA', mimeType: 'image/png' },
          { type: 'resource', resource: { uri: 'file:///a', text: 'two' } },
        ],
      }),
    ).toBe('one\n[image image/png]\ntwo');
    expect(textOf({ content: [], structuredContent: { sum: 5 } })).toBe('{"sum":5}');
  });
});
