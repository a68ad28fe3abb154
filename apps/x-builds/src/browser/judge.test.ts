import { DEFAULT_CHROMIUM, findChromium, judgeBrowserReport } from './judge';
import type { BrowserReport } from './session';

const clean = (): BrowserReport => ({
  uncaught: [],
  consoleErrors: [],
  cspViolations: [],
  ready: true,
  screenshots: { desktop: Buffer.alloc(100), mobile: Buffer.alloc(50) },
  spreads: { desktop: 40, mobile: 35 },
  violations: [],
  frames: [],
  clipStart: 0,
});

const outcomes = (report: BrowserReport) =>
  Object.fromEntries(judgeBrowserReport(report).checks.map((check) => [check.name, check.outcome]));

describe('findChromium', () => {
  it("takes X_BUILDS_CHROMIUM_PATH as given, none for off, else Debian's Chromium only when it is installed", () => {
    expect(findChromium('/opt/chrome/chrome', () => false)).toBe('/opt/chrome/chrome');
    expect(findChromium('off', () => true)).toBeUndefined();
    expect(findChromium(undefined, (file) => file === DEFAULT_CHROMIUM)).toBe(DEFAULT_CHROMIUM);
    expect(findChromium('', () => true)).toBe(DEFAULT_CHROMIUM);
    expect(findChromium(undefined, () => false)).toBeUndefined();
  });
});

describe('judgeBrowserReport', () => {
  it('passes a clean, ready, visible page in both viewports', () => {
    const { checks, accessibility } = judgeBrowserReport(clean());
    expect(checks.every((check) => check.outcome === 'passed')).toBe(true);
    expect(checks.map((check) => check.name)).toEqual([
      'uncaught_exceptions',
      'console_errors',
      'csp_violations',
      'ready_runtime',
      'screenshot',
      'screenshot_mobile',
      'accessibility',
    ]);
    expect(accessibility).toEqual([]);
  });

  it(
    'fails on an uncaught exception, a console error, a CSP violation or a page that never became ready, naming what ' +
      'happened',
    () => {
      const report = {
        ...clean(),
        uncaught: ['boom', 'boom'],
        consoleErrors: ['x is undefined'],
        cspViolations: ['script-src-elem blocked https://cdn.example/x.js'],
        ready: false,
      };
      const { checks } = judgeBrowserReport(report);
      expect(outcomes(report)).toMatchObject({
        uncaught_exceptions: 'failed',
        console_errors: 'failed',
        csp_violations: 'failed',
        ready_runtime: 'failed',
        screenshot: 'passed',
      });
      expect(checks.find((check) => check.name === 'uncaught_exceptions')!.detail).toBe('Uncaught: boom');
      expect(checks.find((check) => check.name === 'csp_violations')!.detail).toContain('https://cdn.example/x.js');
    },
  );

  it('fails a viewport whose screenshot is one flat colour', () => {
    expect(outcomes({ ...clean(), spreads: { desktop: 40, mobile: 0.3 } })).toMatchObject({
      screenshot: 'passed',
      screenshot_mobile: 'failed',
    });
  });

  it('sends serious and critical accessibility findings to fixing and only records the milder ones', () => {
    const violations = [
      {
        id: 'color-contrast',
        impact: 'serious',
        help: 'Elements must meet minimum color contrast ratio thresholds',
        nodes: [1, 2, 3],
      },
      { id: 'region', impact: 'moderate', help: 'All page content should be contained by landmarks', nodes: [1] },
      { id: 'image-alt', impact: 'critical', help: 'Images must have alternative text', nodes: [1] },
    ];
    const blocked = judgeBrowserReport({ ...clean(), violations });
    const check = blocked.checks.find((c) => c.name === 'accessibility')!;
    expect(check.outcome).toBe('failed');
    expect(check.detail).toContain('color-contrast (serious, 3 elements)');
    expect(check.detail).toContain('image-alt (critical, 1 element)');
    expect(blocked.accessibility).toEqual([
      { rule: 'region', impact: 'moderate', help: violations[1]!.help, nodes: 1 },
    ]);

    const mild = judgeBrowserReport({ ...clean(), violations: [violations[1]!] });
    expect(mild.checks.find((c) => c.name === 'accessibility')).toMatchObject({
      outcome: 'passed',
      detail: expect.stringContaining('region'),
    });
    expect(mild.accessibility).toHaveLength(1);
  });
});
