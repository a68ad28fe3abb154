import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createTestDatabase, type TestDatabase } from '@sbc/testing';

// What the browser suites share: Debian's Chromium driven by playwright-core, the console's build, and the
// accessibility check every console page passes at both widths.
const ROOT = path.resolve(__dirname, '../../..');
export const CONSOLE_BUILD = path.join(ROOT, 'dist/apps/console/index.html');
/** Where the console suites leave their screenshots (docs/ copies the ones the README shows). */
export const CONSOLE_ARTIFACTS = path.join(ROOT, 'dist/test-artifacts/console');
export const CHROMIUM = '/usr/bin/chromium';
export const PHONE = { width: 390, height: 844 };
export const DESKTOP = { width: 1280, height: 800 };

/** Refuses to start a console suite without what it needs, saying how to get it. */
export function requireConsoleBrowser(): void {
  if (!existsSync(CONSOLE_BUILD))
    throw new Error('dist/apps/console is missing: run "npx nx run console:build" first (npm test does)');
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  mkdirSync(CONSOLE_ARTIFACTS, { recursive: true });
}

/** Headless Chromium with the flags this closed network needs (without them it keeps dialling refused hosts). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
}

/**
 * axe-core on the page as it stands, at desktop and phone width: no serious or critical violation, and at phone
 * width nothing runs off the right edge (wide tables scroll inside their own frame). Leaves a screenshot of each
 * width in CONSOLE_ARTIFACTS and the page at desktop width.
 */
export async function expectAccessible(page: Page, name: string): Promise<void> {
  for (const [size, suffix] of [
    [DESKTOP, ''],
    [PHONE, '-phone'],
  ] as const) {
    await page.setViewportSize(size);
    // axe-core injected through the DevTools protocol, which the console's CSP (no inline script) allows. Run in the
    // page itself (legacy mode): the default runs it per frame and finishes in a new blank page, for cross-origin
    // frames, which the console has none of; the violations are the same and the check takes under half the time.
    const { violations: found } = await new AxeBuilder({ page }).setLegacyMode().analyze();
    const violations = found
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
    expect({ page: name, width: size.width, violations }).toEqual({ page: name, width: size.width, violations: [] });
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    expect({ page: name, width: size.width, overflow }).toEqual({ page: name, width: size.width, overflow: 0 });
    await page.screenshot({ path: path.join(CONSOLE_ARTIFACTS, `${name}${suffix}.png`), fullPage: true });
  }
  await page.setViewportSize(DESKTOP);
}

/**
 * The four service databases of a console suite's embedded start, in the order account, usage ledger, X builds,
 * runs: on the tests' PostgreSQL when there is one, with the variables that point the services at them; none
 * (PGlite in the data directory) otherwise.
 */
export async function embeddedDatabases(
  label: string,
): Promise<{ databases: TestDatabase[]; env: Record<string, string> }> {
  const databases: TestDatabase[] = [];
  for (const service of ['account', 'usage', 'xbuilds', 'runs'])
    databases.push(await createTestDatabase(`${label}_${service}`));
  const [account, usage, xbuilds, runs] = databases.map((db) => db.databaseUrl ?? '');
  const env: Record<string, string> = account
    ? {
        ACCOUNT_DATABASE_URL: account,
        USAGE_LEDGER_DATABASE_URL: usage!,
        X_BUILDS_DATABASE_URL: xbuilds!,
        RUNS_DATABASE_URL: runs!,
      }
    : {};
  return { databases, env };
}

/** Keeps what a page logs as an error, and its uncaught exceptions, in `errors` (a suite expects none). */
export function collectPageErrors(page: Page, errors: string[]): void {
  page.on('console', (message) => void (message.type() === 'error' && errors.push(message.text())));
  page.on('pageerror', (error) => void errors.push(error.message));
}
