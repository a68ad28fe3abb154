/** The reply a finished build answers with; for X jobs it is posted under the mentioning post, once. */

const X_LIMIT = 280;

export function draftReply(input: { title: string; appUrl: string; lane: string }): string {
  const text =
    input.lane === 'x'
      ? `Your app "${input.title}" is live: ${input.appUrl}`
      : `Your app "${input.title}" is live at ${input.appUrl}`;
  if (text.length <= X_LIMIT) return text;
  // X counts a URL as 23 characters, but the title is the part that can be shortened.
  const room = Math.max(8, input.title.length - (text.length - X_LIMIT) - 1);
  return draftReply({ ...input, title: `${input.title.slice(0, room)}…` });
}

/** `<scheme>://<slug>.<APPS_DOMAIN>[:<port>]` with scheme and port from BASE_URL (CONTRACTS). */
export function appUrlOf(baseUrl: string, appsDomain: string, slug: string): string {
  const base = new URL(baseUrl);
  return `${base.protocol}//${slug}.${appsDomain}${base.port ? `:${base.port}` : ''}`;
}
