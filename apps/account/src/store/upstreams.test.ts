import { routingDialect, UPSTREAM_SLUG_PATTERN } from './upstreams';

describe('the dialect the edge speaks to an endpoint', () => {
  it('an endpoint saved as openai or anthropic is dialed as saved', () => {
    expect(routingDialect('anthropic', null, 'https://llm.example.com')).toBe('anthropic');
    expect(routingDialect('openai', { ok: true, dialect: 'anthropic' }, 'https://api.anthropic.com')).toBe('openai');
  });

  it('an auto endpoint is dialed as its probe found it speaks', () => {
    expect(routingDialect('auto', { ok: true, dialect: 'anthropic' }, 'https://llm.example.com')).toBe('anthropic');
  });

  it('an auto endpoint never probed is guessed from its host, OpenAI-compatible by default', () => {
    expect(routingDialect('auto', null, 'https://api.anthropic.com')).toBe('anthropic');
    expect(routingDialect('auto', null, 'http://127.0.0.1:8000/v1')).toBe('openai');
    expect(routingDialect('auto', { ok: false }, 'not a url')).toBe('openai');
  });
});

describe('upstream slugs', () => {
  it('are lowercase letters, digits and dashes, at most 48, not starting with a dash', () => {
    for (const slug of ['custom', 'my-vllm', '0', 'a'.repeat(48)]) expect(UPSTREAM_SLUG_PATTERN.test(slug)).toBe(true);
    for (const slug of ['', '-x', 'My-vllm', 'a/b', 'a'.repeat(49), 'sp ace'])
      expect(UPSTREAM_SLUG_PATTERN.test(slug)).toBe(false);
  });
});
