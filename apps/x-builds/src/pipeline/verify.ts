import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { CheckResult } from '../store/jobs';
import { READY_MARKER } from './prompts';

export interface VerifyTarget {
  /** Where the edge (and its apps host) is reached from here. */
  edgeUrl: string;
  /** `<slug>.<APPS_DOMAIN>`: sent as the Host header, as a visitor's browser would. */
  host: string;
  signal: AbortSignal;
  /** A Chromium binary: runtime checks and a screenshot; absent, they are recorded as skipped. */
  chromiumPath?: string;
}

export interface Verification {
  checks: CheckResult[];
  screenshot?: Buffer;
}

const FETCH_TIMEOUT_MS = 15_000;
const BROWSER_TIMEOUT_MS = 30_000;

function get(url: URL, host: string, signal: AbortSignal): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(url, { method: 'GET', headers: { host, accept: 'text/html' }, signal, timeout: FETCH_TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
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
 * the ready marker. With a browser it also loads the page: console errors, the marker set at run time, and
 * a PNG screenshot. The motion clip needs a video encoder this build does not carry: always skipped.
 */
export async function verifyLiveApp(target: VerifyTarget): Promise<Verification> {
  const url = new URL('/', target.edgeUrl);
  let answer: Awaited<ReturnType<typeof get>>;
  try {
    answer = await get(url, target.host, target.signal);
  } catch (error) {
    if (target.signal.aborted) throw error;
    return { checks: [failed('http', `The app could not be fetched: ${(error as Error).message}`)] };
  }
  const checks: CheckResult[] = [];
  checks.push(answer.status === 200 ? passed('http', '200 from the apps host') : failed('http', `The apps host answered ${answer.status}.`));
  const type = String(answer.headers['content-type'] ?? '');
  checks.push(type.startsWith('text/html') ? passed('html', type) : failed('html', `Content-Type is "${type}", not HTML.`));
  const csp = String(answer.headers['content-security-policy'] ?? '');
  checks.push(csp.includes("default-src 'none'") ? passed('csp', 'strict Content-Security-Policy present') : failed('csp', 'The Content-Security-Policy header is missing or not strict.'));
  checks.push(answer.body.includes(READY_MARKER) ? passed('ready_marker', `${READY_MARKER} present`) : failed('ready_marker', `The served page has no ${READY_MARKER}.`));
  let screenshot: Buffer | undefined;
  if (!target.chromiumPath) {
    checks.push(skipped('console_errors', 'no browser configured (X_BUILDS_CHROMIUM_PATH)'), skipped('screenshot', 'no browser configured (X_BUILDS_CHROMIUM_PATH)'));
  } else {
    const browser = await loadInBrowser(target.chromiumPath, url, target.host, target.signal);
    checks.push(...browser.checks);
    screenshot = browser.screenshot;
  }
  checks.push(skipped('clip', 'motion clips need a video encoder, which this build does not include'));
  return { checks, screenshot };
}

function run(file: string, args: string[], signal: AbortSignal): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { signal, timeout: BROWSER_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(error);
      else resolve({ stdout, stderr });
    });
  });
}

/** Headless Chromium from its command line: the DOM after scripts ran (with console output), then a screenshot. */
async function loadInBrowser(chromiumPath: string, url: URL, host: string, signal: AbortSignal): Promise<Verification> {
  const dir = await mkdtemp(path.join(tmpdir(), 'xb-verify-'));
  const pageUrl = `${url.protocol}//${host}${url.port ? `:${url.port}` : ''}/`;
  const common = ['--headless=new', '--disable-gpu', '--no-sandbox', '--no-first-run', `--user-data-dir=${path.join(dir, 'profile')}`, `--host-resolver-rules=MAP ${host} ${url.hostname}`, '--virtual-time-budget=3000', '--window-size=800,600'];
  try {
    const checks: CheckResult[] = [];
    const dom = await run(chromiumPath, [...common, '--enable-logging=stderr', '--v=0', '--dump-dom', pageUrl], signal);
    const consoleErrors = dom.stderr.split('\n').filter((line) => /CONSOLE\(\d+\)/.test(line) && /(Uncaught|Error)/.test(line));
    checks.push(consoleErrors.length === 0 ? passed('console_errors', 'no console errors') : failed('console_errors', consoleErrors.slice(0, 3).join(' | ')));
    const ready = new RegExp(`<html[^>]*${READY_MARKER}=`, 'i').test(dom.stdout);
    checks.push(ready ? passed('ready_runtime', `${READY_MARKER} set after load`) : failed('ready_runtime', `The app did not set ${READY_MARKER} after loading.`));
    const file = path.join(dir, 'screenshot.png');
    await run(chromiumPath, [...common, '--hide-scrollbars', `--screenshot=${file}`, pageUrl], signal);
    const screenshot = await readFile(file);
    checks.push(passed('screenshot', `${screenshot.length} bytes PNG`));
    return { checks, screenshot };
  } catch (error) {
    if (signal.aborted) throw error;
    // The browser failing to start says nothing about the app: recorded, but it does not fail the build.
    return { checks: [skipped('browser', `The browser could not run: ${(error as Error).message}`)] };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
