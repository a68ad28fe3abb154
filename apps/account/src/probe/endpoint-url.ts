/**
 * Where a probe dials: the same rule the edge uses for model calls (apps/gateway's endpointUrl; apps never
 * import apps, so it is kept here too): `base_url` works with or without its `/v1` segment (CONTRACTS), so
 * `https://api.openai.com/v1` and `https://api.anthropic.com` both reach `…/v1/models`. Origin and path come
 * apart, which is what the connection pool wants; a query on the base URL is kept.
 */
export function endpointUrl(baseUrl: string, path: `/${string}`): { origin: string; path: string } {
  const url = new URL(baseUrl);
  let prefix = url.pathname.replace(/\/+$/, '');
  if (!/\/v1$/.test(prefix)) prefix += '/v1';
  return { origin: url.origin, path: `${prefix}${path}${url.search}` };
}
