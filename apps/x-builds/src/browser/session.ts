import { lookup } from 'node:dns/promises';
import { readFile } from 'node:fs/promises';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { READY_MARKER } from '../pipeline/prompts';
import type { AxeViolation } from './accessibility';
import type { Frame } from './clip';
import { luminanceSpread } from './pixels';
import { CLIP_SECONDS, DESKTOP, MOBILE } from './viewports';

/** The flags every Chromium of this repo runs with (the console's browser tests use the same). */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
];

const LOAD_TIMEOUT_MS = 15_000;
/** The mobile pass only waits for the ready marker this long: the desktop pass has already judged it. */
const MOBILE_SETTLE_MS = 1_500;
const POLL_MS = 100;
/** The whole look at one app: two loads, the clip's seconds, screenshots and axe-core take well under this. */
const INSPECT_TIMEOUT_MS = 60_000;

export interface InspectTarget {
  chromiumPath: string;
  /** Where the edge is reached from here, e.g. http://127.0.0.1:8080. */
  edgeUrl: string;
  /** `<slug>.<APPS_DOMAIN>`: the page is opened under this name, as a visitor opens it. */
  host: string;
  signal: AbortSignal;
}

/** The browser itself could not run: nothing is known about the app. */
export class BrowserUnavailableError extends Error {}

/** What the browser saw of one app, before any judgement. */
export interface BrowserReport {
  uncaught: string[];
  consoleErrors: string[];
  cspViolations: string[];
  /** Whether the app set the ready marker within the clip's time after load. */
  ready: boolean;
  screenshots: { desktop: Buffer; mobile: Buffer };
  /** Luminance standard deviation of each screenshot (see pixels.ts). */
  spreads: { desktop: number; mobile: number };
  /** axe-core's violations; undefined when axe-core is not installed. */
  violations?: AxeViolation[];
  frames: Frame[];
  clipStart: number;
}

/**
 * Collects CSP violations in the page itself; init scripts come from the browser, so the app's CSP does not apply to
 * them.
 */
const CSP_LISTENER =
  `document.addEventListener('securitypolicyviolation', (event) => {
  (window.__xbCsp = window.__xbCsp || []).push(event.effectiveDirective + ' blocked ' + (event.blockedURI || 'inline ` +
  `code'));
});`;

/** Decodes a PNG data URL on a canvas (in a page with no app CSP) and measures it with luminanceSpread. */
const measureScript = (dataUrl: string) => `(async () => {
  const image = new Image();
  image.src = ${JSON.stringify(dataUrl)};
  await image.decode();
  const canvas = document.createElement('canvas');
  canvas.width = image.naturalWidth;
  canvas.height = image.naturalHeight;
  const context = canvas.getContext('2d');
  context.drawImage(image, 0, 0);
  const spread = ${luminanceSpread.toString()};
  return spread(context.getImageData(0, 0, canvas.width, canvas.height).data);
})()`;

let axeSource: Promise<string | undefined> | undefined;
/** axe-core's browser build, or undefined where the package is not installed (the check is then skipped). */
const loadAxe = () =>
  (axeSource ??= (async () => readFile(require.resolve('axe-core/axe.min.js'), 'utf8'))().catch(() => undefined));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Chromium resolves the app's name to the edge and nothing else: the page is served exactly as a visitor
 * gets it (Host header, CSP and all), and a published app cannot make the verifier's browser reach any
 * other host. The edge's own name is resolved here, as the rules take addresses.
 */
async function resolverRule(host: string, edge: URL): Promise<string> {
  const name = edge.hostname.replace(/^\[|\]$/g, '');
  const { address, family } = await lookup(name);
  return `MAP ${host} ${family === 6 ? `[${address}]` : address}, MAP * ~NOTFOUND`;
}

function watch(page: Page, report: Pick<BrowserReport, 'uncaught' | 'consoleErrors'>): void {
  page.on('pageerror', (error) => report.uncaught.push(error.message.split('\n')[0]!.slice(0, 300)));
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    // The browser asks for /favicon.ico by itself; an app without one has done nothing wrong.
    if (/\/favicon\.ico(\?|$)/.test(message.location().url ?? '')) return;
    // Chromium also logs each CSP violation here; they are reported once, by the listener, as csp_violations.
    if (message.text().includes('Content Security Policy directive')) return;
    report.consoleErrors.push(message.text().slice(0, 300));
  });
}

const isReady = (page: Page) =>
  page.evaluate(`document.documentElement.hasAttribute(${JSON.stringify(READY_MARKER)})`) as Promise<boolean>;

async function waitReady(page: Page, untilMs: number): Promise<boolean> {
  for (;;) {
    if (await isReady(page)) return true;
    if (Date.now() >= untilMs) return false;
    await sleep(POLL_MS);
  }
}

/**
 * The desktop pass: load, then the clip's seconds of screencast while errors are collected, then a screenshot and
 * axe-core.
 */
async function desktopPass(context: BrowserContext, url: string, report: BrowserReport): Promise<Buffer> {
  const page = await context.newPage();
  watch(page, report);
  await page.goto(url, { waitUntil: 'load', timeout: LOAD_TIMEOUT_MS });
  const loadedAt = Date.now();
  const cdp = await context.newCDPSession(page);
  cdp.on('Page.screencastFrame', (frame) => {
    // Stamped on arrival, on the same clock as the load time the clip starts from.
    report.frames.push({ jpeg: Buffer.from(frame.data, 'base64'), at: Date.now() / 1000 });
    cdp.send('Page.screencastFrameAck', { sessionId: frame.sessionId }).catch(() => undefined);
  });
  await cdp.send('Page.startScreencast', {
    format: 'jpeg',
    quality: 80,
    maxWidth: DESKTOP.width,
    maxHeight: DESKTOP.height,
    everyNthFrame: 1,
  });
  report.clipStart = loadedAt / 1000;
  const clipEnd = loadedAt + CLIP_SECONDS * 1000;
  report.ready = await waitReady(page, clipEnd);
  await sleep(clipEnd - Date.now());
  await cdp.send('Page.stopScreencast');
  await cdp.detach();
  const screenshot = await page.screenshot({ type: 'png' });
  report.cspViolations.push(...(((await page.evaluate('window.__xbCsp || []')) as string[]) ?? []));
  const axe = await loadAxe();
  if (axe === undefined) return screenshot;
  // The trailing `0` keeps the script's last value from being taken for a function to call.
  await page.evaluate(`${axe}\n;0`);
  report.violations = (await page.evaluate(
    `axe.run(document, { resultTypes: ['violations'] }).then((result) => result.violations.map((v) => ({ id: v.id, ` +
      `impact: v.impact, help: v.help, nodes: v.nodes.map(() => 0) })))`,
  )) as AxeViolation[];
  return screenshot;
}

async function mobilePass(context: BrowserContext, url: string, report: BrowserReport): Promise<Buffer> {
  const page = await context.newPage();
  watch(page, report);
  await page.goto(url, { waitUntil: 'load', timeout: LOAD_TIMEOUT_MS });
  await waitReady(page, Date.now() + MOBILE_SETTLE_MS);
  const screenshot = await page.screenshot({ type: 'png' });
  report.cspViolations.push(...(((await page.evaluate('window.__xbCsp || []')) as string[]) ?? []));
  return screenshot;
}

async function measure(browser: Browser, screenshots: Buffer[]): Promise<number[]> {
  const page = await browser.newPage();
  const spreads: number[] = [];
  for (const png of screenshots)
    spreads.push((await page.evaluate(measureScript(`data:image/png;base64,${png.toString('base64')}`))) as number);
  return spreads;
}

/**
 * Opens the published app in headless Chromium through the edge, at desktop (1280×800) and mobile (390×844)
 * sizes, and reports what it saw. Throws BrowserUnavailableError when the browser cannot start, and an
 * error about the page when it cannot be loaded at all or stops answering.
 */
export async function inspectApp(target: InspectTarget): Promise<BrowserReport> {
  const edge = new URL(target.edgeUrl);
  const url = `${edge.protocol}//${target.host}${edge.port ? `:${edge.port}` : ''}/`;
  let browser: Browser;
  try {
    // Loaded on first use: a replica without a browser never pays for it.
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({
      executablePath: target.chromiumPath,
      headless: true,
      args: [...CHROMIUM_ARGS, '--no-proxy-server', `--host-resolver-rules=${await resolverRule(target.host, edge)}`],
      timeout: LOAD_TIMEOUT_MS,
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
    });
  } catch (error) {
    throw new BrowserUnavailableError(
      `Chromium (${target.chromiumPath}) could not start: ${(error as Error).message.split('\n')[0]}`,
    );
  }
  const abort = () => void browser.close().catch(() => undefined);
  target.signal.addEventListener('abort', abort, { once: true });
  // A page that hangs its main thread after load would hold every later call (and the job) forever:
  // closing the browser at the deadline rejects them all.
  let timedOut = false;
  const deadline = setTimeout(() => {
    timedOut = true;
    abort();
  }, INSPECT_TIMEOUT_MS);
  try {
    const options = {
      deviceScaleFactor: 1,
      ignoreHTTPSErrors: true,
      serviceWorkers: 'block' as const,
      acceptDownloads: false,
    };
    const report: BrowserReport = {
      uncaught: [],
      consoleErrors: [],
      cspViolations: [],
      ready: false,
      screenshots: { desktop: Buffer.alloc(0), mobile: Buffer.alloc(0) },
      spreads: { desktop: 0, mobile: 0 },
      frames: [],
      clipStart: 0,
    };
    const watched = async (extra: Parameters<Browser['newContext']>[0]) => {
      const context = await browser.newContext({ ...options, ...extra });
      await context.addInitScript({ content: CSP_LISTENER });
      return context;
    };
    const desktop = await desktopPass(await watched({ viewport: DESKTOP }), url, report);
    const mobile = await mobilePass(await watched({ viewport: MOBILE, isMobile: true, hasTouch: true }), url, report);
    const [desktopSpread, mobileSpread] = await measure(browser, [desktop, mobile]);
    report.screenshots = { desktop, mobile };
    report.spreads = { desktop: desktopSpread!, mobile: mobileSpread! };
    return report;
  } catch (error) {
    if (timedOut)
      throw new Error(`The page stopped answering: the browser gave up on it after ${INSPECT_TIMEOUT_MS / 1000} s.`);
    throw error;
  } finally {
    clearTimeout(deadline);
    target.signal.removeEventListener('abort', abort);
    await browser.close().catch(() => undefined);
  }
}
