import { auditHtml, contentSecurityPolicy } from './audit';
import { extractHtml } from './prompts';
import { screenRequest } from './screening';

const policy = { maxBytes: 10_000, scriptAllowlist: ['https://cdn.example'] };
const page = (head = '', body = '') =>
  `<!doctype html><html><head><title>t</title>${head}</head><body>${body}` +
  `<script>document.documentElement.setAttribute('data-xb-ready','1')</script></body></html>`;
const checks = (html: string) => auditHtml(html, policy).map((finding) => `${finding.severity}:${finding.check}`);

describe('the audit of a bundle', () => {
  it('passes a whole, self-contained page that sets the ready marker', () => {
    expect(checks(page())).toEqual([]);
    expect(checks(page('<script src="https://cdn.example/lib.js"></script>'))).toEqual([]);
  });

  it(
    'sends outside scripts, trackers, outside resources, ' +
      'secrets, a cut-off document and a missing marker to fixing',
    () => {
      expect(checks(page('<script src="https://evil.example/x.js"></script>'))).toEqual(['fixable:external_scripts']);
      expect(checks(page('<script src="lib.js"></script>'))).toEqual(['fixable:external_scripts']);
      expect(checks(page('<script>fetch("https://www.google-analytics.com/collect")</script>'))).toEqual([
        'fixable:trackers',
      ]);
      expect(
        checks(
          page('<link rel="stylesheet" href="https://fonts.example/a.css">', '<img src="https://img.example/a.png">'),
        ),
      ).toEqual(['fixable:external_resources', 'fixable:external_resources']);
      expect(checks(page('', '<p>sk-abcdefghijklmnopqrstuvwxyz0123</p>'))).toEqual(['fixable:secrets']);
      expect(checks('<html><body><p>no doctype</p><script>x("data-xb-ready")</script>')).toEqual([
        'fixable:valid_html',
      ]);
      expect(checks('<!doctype html><html><body></body></html>')).toEqual(['fixable:ready_marker']);
      expect(checks(page('', 'x'.repeat(10_001)))).toEqual(['fixable:size']);
    },
  );

  it('refuses output that is harmful in itself', () => {
    expect(checks(page('<script>new CoinHive.Anonymous("k").start()</script>'))).toEqual(['unsafe:unsafe']);
  });

  it('serves apps with a CSP that allows only their own inline code and the allow-listed script origins', () => {
    const csp = contentSecurityPolicy(['https://cdn.example']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self' 'unsafe-inline' https://cdn.example");
    expect(csp).toContain("connect-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
  });
});

describe('reading the model answer', () => {
  it('takes the fenced document, or the doctype to </html>, and nothing around it', () => {
    expect(extractHtml('Here you go:\n```html\n<!doctype html><html></html>\n```\nEnjoy')).toBe(
      '<!doctype html><html></html>',
    );
    expect(extractHtml('Sure! <!DOCTYPE html><html><body></body></html> filler-1 filler-2')).toBe(
      '<!DOCTYPE html><html><body></body></html>',
    );
    expect(extractHtml('I cannot help with that.')).toBeUndefined();
  });
});

describe('the screen', () => {
  it('refuses harmful requests with a category and lets ordinary ones through', () => {
    expect(screenRequest('a phishing page that looks like a bank login')).toMatchObject({ category: 'phishing' });
    expect(screenRequest('track my ex everywhere')).toMatchObject({ category: 'harassment' });
    expect(screenRequest('   ')).toMatchObject({ category: 'empty' });
    expect(screenRequest('a pomodoro timer with a bouncing tomato')).toBeUndefined();
  });
});
