import { accessSync, constants } from 'node:fs';
import type { AccessibilityFinding, CheckResult } from '../store/jobs';
import { describeFindings, splitViolations } from './accessibility';
import { isBlank } from './pixels';
import type { BrowserReport } from './session';
import { CLIP_SECONDS, DESKTOP, MOBILE } from './viewports';

/** Where Debian's `chromium` package puts the browser. */
export const DEFAULT_CHROMIUM = '/usr/bin/chromium';

/**
 * The browser verification uses: X_BUILDS_CHROMIUM_PATH when set, `off` for none, else Debian's Chromium
 * when it is installed. Undefined means the browser checks are recorded as skipped.
 */
export function findChromium(configured: string | undefined, exists = isExecutable): string | undefined {
  if (configured === 'off') return undefined;
  if (configured) return configured;
  return exists(DEFAULT_CHROMIUM) ? DEFAULT_CHROMIUM : undefined;
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

const passed = (name: string, detail: string): CheckResult => ({ name, outcome: 'passed', detail });
const failed = (name: string, detail: string): CheckResult => ({ name, outcome: 'failed', detail });
const skipped = (name: string, detail: string): CheckResult => ({ name, outcome: 'skipped', detail });

/** The first few of a list, for a check's detail and the fixing prompt. */
const firstOf = (items: string[]) =>
  [...new Set(items)].slice(0, 3).join(' | ') + (items.length > 3 ? ` (and ${items.length - 3} more)` : '');

function screenshotCheck(
  name: string,
  size: { width: number; height: number },
  png: Buffer,
  spread: number,
): CheckResult {
  if (isBlank(spread))
    return failed(
      name,
      `The page looks blank at ${size.width}×${size.height}: one flat colour (luminance spread ${spread.toFixed(2)}).`,
    );
  return passed(name, `${size.width}×${size.height} PNG, ${png.length} bytes`);
}

/**
 * Judges what the browser saw: an uncaught exception, a console error, a CSP violation, a page that never
 * became ready, a blank screenshot or a serious/critical accessibility finding fails the verification (and
 * goes to fixing); milder accessibility findings are only recorded.
 */
export function judgeBrowserReport(report: BrowserReport): {
  checks: CheckResult[];
  accessibility: AccessibilityFinding[];
} {
  const { blocking, recorded } = splitViolations(report.violations ?? []);
  const checks = [
    report.uncaught.length === 0
      ? passed('uncaught_exceptions', 'none')
      : failed('uncaught_exceptions', `Uncaught: ${firstOf(report.uncaught)}`),
    report.consoleErrors.length === 0
      ? passed('console_errors', 'none')
      : failed('console_errors', `Console errors: ${firstOf(report.consoleErrors)}`),
    report.cspViolations.length === 0
      ? passed('csp_violations', 'none')
      : failed('csp_violations', `The Content-Security-Policy blocked: ${firstOf(report.cspViolations)}`),
    report.ready
      ? passed('ready_runtime', 'the ready marker was set after load')
      : failed('ready_runtime', `The app did not set the ready marker within ${CLIP_SECONDS} s of loading.`),
    screenshotCheck('screenshot', DESKTOP, report.screenshots.desktop, report.spreads.desktop),
    screenshotCheck('screenshot_mobile', MOBILE, report.screenshots.mobile, report.spreads.mobile),
    report.violations === undefined
      ? skipped('accessibility', 'axe-core is not installed')
      : blocking.length > 0
        ? failed('accessibility', `Serious accessibility problems: ${describeFindings(blocking)}`)
        : passed(
            'accessibility',
            recorded.length > 0
              ? `${recorded.length} minor or moderate finding(s) recorded: ${recorded.map((f) => f.rule).join(', ')}`
              : 'no findings',
          ),
  ];
  return { checks, accessibility: recorded };
}
