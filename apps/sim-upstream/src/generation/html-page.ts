/**
 * The simulator's app builder: a deterministic, small, valid, self-contained HTML page, so the X builds
 * pipeline can build, audit, publish and verify a real app against the simulator.
 *
 * Triggers (in the last user message):
 * - `sim:html`: the reply is the page. It sets `data-xb-ready` on <html> once its script has run (the ready
 *   marker the builds verifier looks for) and carries no external resource.
 * - `sim:broken` together with `sim:html`: the page loads a script from an outside tracker and has no ready
 *   marker, so an audit refuses it; adding `sim:fix` (what a repair request carries) gives the good page again.
 * - `sim:throws` together with `sim:html`: the page passes the audit but its script throws on load (so it never
 *   becomes ready), which only a browser sees; `sim:fix` gives the good page again.
 * - `sim:csp` together with `sim:html`: the page's script loads an outside image, which the apps host's CSP
 *   blocks in a browser; `sim:fix` gives the good page again.
 */

const HTML_MARKER = 'sim:html';
const BROKEN_MARKER = 'sim:broken';
const FIX_MARKER = 'sim:fix';
const THROWS_MARKER = 'sim:throws';
const CSP_MARKER = 'sim:csp';

const TITLE_WORDS = 6;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/** The page title: the first words of the request, markers and fenced code left out. */
function titleOf(text: string): string {
  const words = text
    .replace(/```[\s\S]*?```/g, ' ')
    .split(/\s+/)
    .filter((word) => word && !word.startsWith('sim:'))
    .slice(0, TITLE_WORDS);
  return words.join(' ') || 'Simulated app';
}

export function wantsHtmlPage(lastUserText: string): boolean {
  return lastUserText.includes(HTML_MARKER);
}

export function htmlPage(lastUserText: string): string {
  const title = escapeHtml(titleOf(lastUserText));
  const broken = lastUserText.includes(BROKEN_MARKER) && !lastUserText.includes(FIX_MARKER);
  const throws = lastUserText.includes(THROWS_MARKER) && !lastUserText.includes(FIX_MARKER);
  const outsideImage = lastUserText.includes(CSP_MARKER) && !lastUserText.includes(FIX_MARKER);
  const head = [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${title}</title>`,
    '<style>body{margin:0;min-height:100vh;display:grid;place-items:center;font-family:system-ui,sans-serif;' +
      'background:#0f172a;color:#e2e8f0}canvas{background:#1e293b;border-radius:8px}</style>',
    ...(broken ? ['<script src="https://tracker.sim-upstream.invalid/collect.js"></script>'] : []),
    '</head>',
    '<body>',
    '<main>',
    `<h1>${title}</h1>`,
    '<p>A simulated app (sim-upstream simulator).</p>',
    '<canvas id="stage" width="320" height="180"></canvas>',
    '</main>',
    '<script>',
    ...(throws ? ["throw new Error('sim: the app failed to start');"] : []),
    ...(outsideImage ? ["new Image().src = 'https://pixel.sim-upstream.invalid/p.png';"] : []),
    "const ctx = document.getElementById('stage').getContext('2d');",
    'let x = 0;',
    "function frame() { ctx.clearRect(0, 0, 320, 180); ctx.fillStyle = '#38bdf8'; ctx.beginPath(); ctx.arc(20 + (x % " +
      '280), 90, 16, 0, Math.PI * 2); ctx.fill(); x += 2; requestAnimationFrame(frame); }',
    'frame();',
    ...(broken ? [] : ["document.documentElement.setAttribute('data-xb-ready', '1');"]),
    '</script>',
    '</body>',
    '</html>',
  ];
  return head.join('\n');
}
