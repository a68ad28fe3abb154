import { parse, type DefaultTreeAdapterMap, type ParserError } from 'parse5';
import type { Finding } from '../store/jobs';
import { READY_MARKER } from './prompts';

type Node = DefaultTreeAdapterMap['node'];
type Element = DefaultTreeAdapterMap['element'];

export interface AuditPolicy {
  maxBytes: number;
  /** Origins whose scripts may be loaded, e.g. `https://cdn.jsdelivr.net`. */
  scriptAllowlist: string[];
}

/** Parse errors that mean the document is cut off or not a document, rather than merely sloppy. */
const BROKEN_DOCUMENT = new Set([
  'missing-doctype',
  'eof-in-tag',
  'eof-in-comment',
  'eof-in-doctype',
  'eof-in-script-html-comment-like-text',
  'eof-in-cdata',
]);

const TRACKER_HOSTS = [
  'google-analytics.com',
  'googletagmanager.com',
  'connect.facebook.net',
  'static.hotjar.com',
  'cdn.segment.com',
  'cdn.mxpnl.com',
  'doubleclick.net',
  'plausible.io',
  'clarity.ms',
];
const TRACKERS = new RegExp(`(${TRACKER_HOSTS.map((host) => host.replaceAll('.', '\\.')).join('|')})`, 'i');

const SECRETS: { name: string; pattern: RegExp }[] = [
  { name: 'an OpenAI-style API key', pattern: /\bsk-[A-Za-z0-9_-]{20,}/ },
  { name: 'a caller key of this service', pattern: /\bsbc_[A-Za-z0-9_-]{20,}/ },
  { name: 'an AWS access key', pattern: /\bAKIA[0-9A-Z]{16}\b/ },
  { name: 'a GitHub token', pattern: /\bgh[pousr]_[A-Za-z0-9]{30,}/ },
  { name: 'a Slack token', pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/ },
  { name: 'a private key', pattern: /-----BEGIN [A-Z ]*PRIVATE KEY-----/ },
];

/** Output that is harmful in itself: no repair, the job is refused. */
const UNSAFE: { name: string; pattern: RegExp }[] = [
  { name: 'a cryptocurrency miner', pattern: /(coinhive|cryptonight|coin-hive|webminepool|CoinImp)/i },
  {
    name: 'a credential prompt',
    pattern: /type=["']?password["']?[^>]*>[\s\S]*(fetch|XMLHttpRequest|sendBeacon)\s*\(/i,
  },
];

function attr(element: Element, name: string): string | undefined {
  return element.attrs.find((a) => a.name === name)?.value;
}

function* elements(node: Node): Generator<Element> {
  if ('tagName' in node) yield node;
  const children = 'childNodes' in node ? node.childNodes : [];
  for (const child of children) yield* elements(child);
  if ('content' in node && node.content) yield* elements(node.content as unknown as Node);
}

function originOf(url: string): string | undefined {
  try {
    const parsed = new URL(url, 'https://app.invalid/');
    return parsed.origin === 'https://app.invalid' ? undefined : parsed.origin;
  } catch {
    return undefined;
  }
}

/**
 * Static checks of a bundle before it is published: size, a whole document, nothing loaded from outside
 * (scripts only from the allow-list), no trackers, no secrets, the ready marker present. Fixable findings
 * go to the fixing stage; unsafe ones refuse the job.
 */
export function auditHtml(html: string, policy: AuditPolicy): Finding[] {
  const findings: Finding[] = [];
  const fixable = (check: string, message: string) => findings.push({ check, message, severity: 'fixable' });
  const bytes = Buffer.byteLength(html, 'utf8');
  if (bytes > policy.maxBytes) fixable('size', `The document is ${bytes} bytes; the limit is ${policy.maxBytes}.`);
  for (const rule of UNSAFE)
    if (rule.pattern.test(html))
      findings.push({ check: 'unsafe', message: `The document contains ${rule.name}.`, severity: 'unsafe' });
  for (const secret of SECRETS)
    if (secret.pattern.test(html))
      fixable('secrets', `The document contains what looks like ${secret.name}; remove it.`);
  if (TRACKERS.test(html)) fixable('trackers', 'The document references an analytics or tracking service; remove it.');
  if (!html.includes(READY_MARKER))
    fixable('ready_marker', `The app never sets ${READY_MARKER} on <html> once it has started.`);

  const parseErrors: ParserError[] = [];
  const document = parse(html, { onParseError: (error) => parseErrors.push(error) });
  const broken = [
    ...new Set(parseErrors.filter((error) => BROKEN_DOCUMENT.has(error.code)).map((error) => error.code)),
  ];
  if (broken.length > 0) fixable('valid_html', `The document is not a complete HTML document (${broken.join(', ')}).`);

  for (const element of elements(document as unknown as Node)) {
    const tag = element.tagName;
    if (tag === 'script') {
      const src = attr(element, 'src');
      if (src === undefined) continue;
      const origin = originOf(src);
      if (!origin) fixable('external_scripts', `The script ${src} is not part of the single-file bundle; inline it.`);
      else if (!policy.scriptAllowlist.includes(origin))
        fixable('external_scripts', `The script from ${origin} is not on the allow-list; inline it or remove it.`);
    } else if (
      (tag === 'link' && /stylesheet|preload|modulepreload|icon/i.test(attr(element, 'rel') ?? '')) ||
      ['img', 'iframe', 'audio', 'video', 'source', 'embed', 'object'].includes(tag)
    ) {
      const url = attr(element, 'href') ?? attr(element, 'src') ?? attr(element, 'data');
      if (url && originOf(url))
        fixable(
          'external_resources',
          `<${tag}> loads ${url} from another origin; the app is served without outside access.`,
        );
    } else if (tag === 'form') {
      const action = attr(element, 'action');
      if (action && originOf(action))
        fixable('external_resources', `A form submits to ${action}; the app may not send data anywhere.`);
    }
  }
  return findings;
}

/**
 * The Content-Security-Policy an app is served with: its own inline code, the allow-listed script origins, nothing
 * else.
 */
export function contentSecurityPolicy(scriptAllowlist: string[]): string {
  const scripts = ["'self'", "'unsafe-inline'", ...scriptAllowlist].join(' ');
  return [
    "default-src 'none'",
    `script-src ${scripts}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "media-src 'self' data: blob:",
    "connect-src 'none'",
    "frame-src 'none'",
    "worker-src 'self' blob:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}
