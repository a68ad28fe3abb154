import type { ChatMessage } from './model-client';
import type { Finding } from '../store/jobs';

/** The attribute an app sets on <html> once it has started; verification waits for it. */
export const READY_MARKER = 'data-xb-ready';

const SYSTEM_PROMPT = [
  "You build small web apps. The user's message says what to build. Answer with one complete, self-contained HTML " +
    'document and nothing else:',
  '- start with <!doctype html> and end with </html>; put all CSS in <style> and all JavaScript in inline <script> ' +
    'elements;',
  '- load nothing from other origins (no CDNs, fonts, images, analytics or trackers); draw with canvas, SVG, CSS or ' +
    'emoji;',
  '- no network requests, no forms that submit anywhere, no cookies, no secrets or API keys;',
  `- when the app has started, run document.documentElement.setAttribute('${READY_MARKER}', '1');`,
  '- keep it small (well under 200 KB), accessible and responsive.',
].join('\n');

/** What the simulator answers with a page (see apps/sim-upstream/src/generation/html-page.ts). */
const SIM_HTML = 'sim:html';
const SIM_FIX = 'sim:fix';

export function buildMessages(prompt: string, simMarkers: boolean): ChatMessage[] {
  return [
    { role: 'system', content: SYSTEM_PROMPT },
    { role: 'user', content: simMarkers ? `${prompt}\n\n${SIM_HTML}` : prompt },
  ];
}

export function fixMessages(prompt: string, html: string, findings: Finding[], simMarkers: boolean): ChatMessage[] {
  const problems = findings.map((finding) => `- ${finding.check}: ${finding.message}`).join('\n');
  const request = [
    prompt,
    '',
    'The previous version failed these checks:',
    problems,
    '',
    'Answer with the complete corrected HTML document. The previous version:',
    '```html',
    html,
    '```',
  ].join('\n');
  return [
    { role: 'system', content: SYSTEM_PROMPT },
    { role: 'user', content: simMarkers ? `${request}\n\n${SIM_HTML} ${SIM_FIX}` : request },
  ];
}

/** The HTML document in a model's answer: a fenced block if there is one, else from the doctype to </html>. */
export function extractHtml(answer: string): string | undefined {
  const fenced = /```(?:html)?\s*\n([\s\S]*?)```/i.exec(answer);
  const text = (fenced ? fenced[1]! : answer).trim();
  const start = text.search(/<!doctype html|<html[\s>]/i);
  if (start < 0) return undefined;
  const end = text.toLowerCase().lastIndexOf('</html>');
  return end < 0 ? text.slice(start) : text.slice(start, end + '</html>'.length);
}

/** A short title for the slug and the reply: the API title, else the first words of the request. */
export function titleOf(prompt: string, title?: string | null): string {
  if (title) return title;
  const words = prompt
    .replace(/@\w+/g, ' ')
    .replace(/https?:\/\/\S+/g, ' ')
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, 6);
  return words.join(' ') || 'app';
}
