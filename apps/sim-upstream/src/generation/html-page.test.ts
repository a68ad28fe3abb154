import { htmlPage, wantsHtmlPage } from './html-page';
import { planReply } from './reply';

const ask = (lastUserText: string) => ({
  lastUserText,
  toolResult: undefined,
  tools: [],
  toolChoice: { mode: 'auto' as const },
});

describe('the simulated app builder', () => {
  it(
    'answers sim:html with one complete page titled by the ' +
      'request, carrying the ready marker and no outside resource',
    () => {
      const page = htmlPage('A bouncing <ball> game sim:html');
      expect(page.startsWith('<!doctype html>')).toBe(true);
      expect(page.trimEnd().endsWith('</html>')).toBe(true);
      expect(page).toContain('<title>A bouncing &#60;ball&#62; game</title>');
      expect(page).toContain("setAttribute('data-xb-ready', '1')");
      expect(page).not.toMatch(/src="https?:/);
    },
  );

  it('breaks the page on sim:broken (outside script, no ready marker) until the request also carries sim:fix', () => {
    const broken = htmlPage('ball sim:broken sim:html');
    expect(broken).toContain('<script src="https://tracker.sim-upstream.invalid/collect.js"></script>');
    expect(broken).not.toContain('data-xb-ready');
    expect(htmlPage('ball sim:broken sim:html sim:fix')).toBe(htmlPage('ball sim:html'));
  });

  it(
    'makes the script throw before the ready marker on sim:throws, which still looks fine to a static audit, until ' +
      'sim:fix',
    () => {
      const throws = htmlPage('ball sim:throws sim:html');
      const script = throws.slice(throws.indexOf('<script>'));
      expect(script.indexOf('throw new Error(')).toBeGreaterThan(0);
      expect(script.indexOf('throw new Error(')).toBeLessThan(script.indexOf('data-xb-ready'));
      expect(htmlPage('ball sim:throws sim:html sim:fix')).toBe(htmlPage('ball sim:html'));
    },
  );

  it(
    'loads an outside image from its script on sim:csp, which ' + 'only a browser under the CSP catches, until sim:fix',
    () => {
      expect(htmlPage('ball sim:csp sim:html')).toContain(
        "new Image().src = 'https://pixel.sim-upstream.invalid/p.png';",
      );
      expect(htmlPage('ball sim:csp sim:html sim:fix')).toBe(htmlPage('ball sim:html'));
    },
  );

  it('is what planReply says for sim:html, whole and deterministic, and only then', () => {
    const plan = planReply(ask('tiny clock sim:html'), { maxTokens: undefined, stop: [] });
    expect(plan).toMatchObject({ kind: 'text', finish: 'end' });
    expect(plan.pieces.join('')).toBe(htmlPage('tiny clock sim:html'));
    expect(wantsHtmlPage('hello')).toBe(false);
    expect(planReply(ask('hello'), { maxTokens: undefined, stop: [] }).pieces.join('')).toBe(
      'Simulated reply to: hello',
    );
  });
});
