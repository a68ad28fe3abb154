import { agentSetup, AGENTS, KEY_PLACEHOLDER, shellSnippet } from '@sbc/agent-setup';
import { buildOpenApiDocument, ROUTES } from '@sbc/api';
import { errorCodes } from '@sbc/errors';
import { renderApiReference, type OpenApiDocument } from './api-reference';
import { renderGuidePage } from './guide-page';

describe('developer pages', () => {
  it('the guide has one entry per registry code and shows each quick start verbatim, escaped', () => {
    const html = renderGuidePage({
      baseUrl: 'https://gw.test',
      quickStarts: [{ id: 'quickstart-x', title: 'X', file: 'x.sh', text: 'echo "<b>&</b>"' }],
    });
    for (const code of errorCodes) expect(html).toContain(`id="errors-${code}"`);
    expect(html).toContain('echo &quot;&lt;b&gt;&amp;&lt;/b&gt;&quot;');
    expect(html).not.toMatch(/<script|<style|\sstyle=/);
  });

  it('the guide explains routing, linking the code a caller gets when every target is cooling', () => {
    const html = renderGuidePage({ baseUrl: 'https://gw.test', quickStarts: [] });
    const routing = html.slice(html.indexOf('id="routing"'), html.indexOf('id="error-shapes"'));
    for (const term of ['x-sbc-served-by', 'x-sbc-attempts', '"models"']) expect(routing).toContain(term);
    expect(routing).toContain('href="#errors-upstream_cooling"');
    expect(html).toContain('id="errors-upstream_cooling"');
  });

  it('the guide explains the response cache: how to opt in and skip it, and how a hit shows', () => {
    const html = renderGuidePage({ baseUrl: 'https://gw.test', quickStarts: [] });
    const cache = html.slice(html.indexOf('id="response-cache"'), html.indexOf('id="error-shapes"'));
    for (const term of ['cache_ttl_s', 'x-sbc-cache-ttl', 'x-sbc-cache: hit', 'cache_tools'])
      expect(cache).toContain(term);
  });

  it('the guide shows every coding agent’s setup for this service, in each dialect it speaks, escaped', () => {
    const html = renderGuidePage({ baseUrl: 'https://gw.test', quickStarts: [] });
    const section = html.slice(html.indexOf('id="coding-agents"'), html.indexOf('id="routing"'));
    const escaped = (text: string) =>
      text
        .replaceAll('&', '&amp;')
        .replaceAll('<', '&lt;')
        .replaceAll('>', '&gt;')
        .replaceAll('"', '&quot;')
        .replaceAll("'", '&#39;');
    for (const agent of AGENTS) {
      expect(section).toContain(`id="agents-${agent.id}"`);
      for (const dialect of agent.dialects) {
        const setup = agentSetup(
          agent.id,
          { baseUrl: 'https://gw.test', apiKey: KEY_PLACEHOLDER, model: 'house' },
          dialect,
        );
        expect(section).toContain(escaped(shellSnippet(setup)));
      }
    }
    expect(section).toContain('ANTHROPIC_BASE_URL=https://gw.test');
    expect(section).not.toContain('<your sbc_ key>');
    expect(section).toContain('href="/console/keys"');
  });

  it('the reference has an anchor and the scopes of every operation, and links error statuses to their codes', () => {
    const document = buildOpenApiDocument(ROUTES, { baseUrl: 'https://gw.test' }) as unknown as OpenApiDocument;
    const html = renderApiReference(document);
    for (const route of ROUTES) {
      const op = document.paths[route.path]![route.method]!;
      const start = html.indexOf(`id="op-${op.operationId}"`);
      expect(start).toBeGreaterThan(0);
      const section = html.slice(start, html.indexOf('</section>', start));
      for (const scope of op['x-required-scopes'] ?? []) expect(section).toContain(`<code>${scope}</code>`);
    }
    expect(html).toContain('<a href="/developers#errors-rate_limited"><code>rate_limited</code></a>');
    const createKey = html.slice(html.indexOf('id="op-createKey"'));
    expect(createKey.slice(0, createKey.indexOf('</section>'))).toMatch(
      /Body \(application\/json\)[\s\S]*<code>name<\/code> <span class="req">required<\/span>/,
    );
  });

  it('a description cannot inject markup into the reference', () => {
    const html = renderApiReference({
      paths: { '/x': { get: { operationId: 'x', description: '<img src=x onerror=alert(1)>' } } },
    });
    expect(html).not.toContain('<img');
  });
});
