/**
 * An upstream's `base_url` works with or without its `/v1` segment (CONTRACTS): `https://api.openai.com/v1`
 * and `https://api.anthropic.com` are both taken as written. Returns origin and path apart, which is what
 * the connection pool wants.
 */
export function endpointUrl(baseUrl: string, path: `/${string}`): { origin: string; path: string } {
  const url = new URL(baseUrl);
  let prefix = url.pathname.replace(/\/+$/, '');
  if (!/\/v1$/.test(prefix)) prefix += '/v1';
  return { origin: url.origin, path: `${prefix}${path}${url.search}` };
}
