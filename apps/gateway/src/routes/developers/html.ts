/** Text into HTML (element content or a double-quoted attribute). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** `code` spans for the registry's backquoted words; everything else escaped. */
export function inlineCode(text: string): string {
  return escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>');
}

/** A whole page around `main`: one external stylesheet, no script, a skip link and a landmark per region. */
export function pageShell(options: { title: string; main: string; nav: string }): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${escapeHtml(options.title)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/developers/developers.css">
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top"><nav aria-label="Developer docs">${options.nav}</nav></header>
<main id="main">
${options.main}
</main>
</body>
</html>
`;
}

export function topNav(current: 'guide' | 'api'): string {
  const link = (href: string, label: string, here: boolean) =>
    `<a href="${href}"${here ? ' aria-current="page"' : ''}>${label}</a>`;
  return [
    link('/developers', 'Guide and errors', current === 'guide'),
    link('/developers/api', 'API reference', current === 'api'),
    link('/docs/openapi.json', 'OpenAPI document', false),
    link('/console/', 'Console', false),
  ].join('\n');
}
