import http from 'node:http';
import https from 'node:https';
import { encodeClip } from '../browser/clip';
import { judgeBrowserReport } from '../browser/judge';
import { inspectApp, BrowserUnavailableError } from '../browser/session';
import { CLIP_SECONDS } from '../browser/viewports';
import type { MediaKind } from '../store/media';
import type { AccessibilityFinding, CheckResult } from '../store/jobs';
import { READY_MARKER } from './prompts';

export interface VerifyTarget {
  /** Where the edge (and its apps host) is reached from here. */
  edgeUrl: string;
  /** `<slug>.<APPS_DOMAIN>`: sent as the Host header, as a visitor's browser would. */
  host: string;
  signal: AbortSignal;
  /**
   * A Chromium binary (see findChromium): the browser checks, screenshots and clip; absent, they are recorded as
   * skipped.
   */
  chromiumPath?: string;
}

export interface RecordedMedia {
  kind: MediaKind;
  contentType: string;
  body: Buffer;
}

export interface Verification {
  checks: CheckResult[];
  /** Recorded only for an app that passed every check. */
  media: RecordedMedia[];
  /** Accessibility findings below serious: recorded on the job, they do not fail it. */
  accessibility: AccessibilityFinding[];
}

const FETCH_TIMEOUT_MS = 15_000;

function get(
  url: URL,
  host: string,
  signal: AbortSignal,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(
      url,
      { method: 'GET', headers: { host, accept: 'text/html' }, signal, timeout: FETCH_TIMEOUT_MS },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

const passed = (name: string, detail: string): CheckResult => ({ name, outcome: 'passed', detail });
const failed = (name: string, detail: string): CheckResult => ({ name, outcome: 'failed', detail });
const skipped = (name: string, detail: string): CheckResult => ({ name, outcome: 'skipped', detail });

/**
 * Fetches the live app through the apps host, from outside the builds service: 200, HTML, a CSP header and
 * the ready marker. With a browser it then opens the app as a visitor would (see inspectApp and
 * judgeBrowserReport) and, when every check passed, records its two screenshots and a motion clip.
 */
export async function verifyLiveApp(target: VerifyTarget): Promise<Verification> {
  const url = new URL('/', target.edgeUrl);
  let answer: Awaited<ReturnType<typeof get>>;
  try {
    answer = await get(url, target.host, target.signal);
  } catch (error) {
    if (target.signal.aborted) throw error;
    return {
      checks: [failed('http', `The app could not be fetched: ${(error as Error).message}`)],
      media: [],
      accessibility: [],
    };
  }
  const checks: CheckResult[] = [];
  checks.push(
    answer.status === 200
      ? passed('http', '200 from the apps host')
      : failed('http', `The apps host answered ${answer.status}.`),
  );
  const type = String(answer.headers['content-type'] ?? '');
  checks.push(
    type.startsWith('text/html') ? passed('html', type) : failed('html', `Content-Type is "${type}", not HTML.`),
  );
  const csp = String(answer.headers['content-security-policy'] ?? '');
  checks.push(
    csp.includes("default-src 'none'")
      ? passed('csp', 'strict Content-Security-Policy present')
      : failed('csp', 'The Content-Security-Policy header is missing or not strict.'),
  );
  checks.push(
    answer.body.includes(READY_MARKER)
      ? passed('ready_marker', `${READY_MARKER} present`)
      : failed('ready_marker', `The served page has no ${READY_MARKER}.`),
  );
  if (!target.chromiumPath) {
    checks.push(
      skipped('browser', 'no browser: Chromium was not found (X_BUILDS_CHROMIUM_PATH, else /usr/bin/chromium)'),
    );
    return { checks, media: [], accessibility: [] };
  }
  const browser = await inBrowser(
    { ...target, chromiumPath: target.chromiumPath },
    checks.every((check) => check.outcome !== 'failed'),
  );
  return { checks: [...checks, ...browser.checks], media: browser.media, accessibility: browser.accessibility };
}

/** The browser's checks; with `record`, and when they all pass, the screenshots and the clip too. */
async function inBrowser(target: VerifyTarget & { chromiumPath: string }, record: boolean): Promise<Verification> {
  let report: Awaited<ReturnType<typeof inspectApp>>;
  try {
    report = await inspectApp({
      chromiumPath: target.chromiumPath,
      edgeUrl: target.edgeUrl,
      host: target.host,
      signal: target.signal,
    });
  } catch (error) {
    if (target.signal.aborted) throw error;
    // A browser that cannot start says nothing about the app: recorded, but it does not fail the build.
    if (error instanceof BrowserUnavailableError)
      return { checks: [skipped('browser', error.message)], media: [], accessibility: [] };
    return {
      checks: [
        failed('browser', `The page could not be loaded in the browser: ${(error as Error).message.split('\n')[0]}`),
      ],
      media: [],
      accessibility: [],
    };
  }
  const { checks, accessibility } = judgeBrowserReport(report);
  if (!record || checks.some((check) => check.outcome === 'failed')) {
    return {
      checks: [...checks, skipped('clip', 'not recorded for an app that failed its checks')],
      media: [],
      accessibility,
    };
  }
  const media: RecordedMedia[] = [
    { kind: 'screenshot', contentType: 'image/png', body: report.screenshots.desktop },
    { kind: 'screenshot_mobile', contentType: 'image/png', body: report.screenshots.mobile },
  ];
  try {
    const clip = await encodeClip(report.frames, report.clipStart, report.clipStart + CLIP_SECONDS, target.signal);
    if (clip) {
      media.push({ kind: 'clip', ...clip });
      checks.push(
        passed(
          'clip',
          `${CLIP_SECONDS} s ${clip.contentType} from ${report.frames.length} painted frame(s), ${clip.body.length} ` +
            `bytes`,
        ),
      );
    } else {
      checks.push(skipped('clip', 'no video encoder: ffmpeg with libx264 or libvpx was not found'));
    }
  } catch (error) {
    if (target.signal.aborted) throw error;
    checks.push(skipped('clip', `The clip could not be encoded: ${(error as Error).message.slice(0, 300)}`));
  }
  return { checks, media, accessibility };
}
