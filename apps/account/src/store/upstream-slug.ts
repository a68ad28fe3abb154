/**
 * Slugs of new endpoints: derived from the label (`My vLLM box` → `my-vllm-box`), made unique on the account
 * by a numeric suffix (`-2`, `-3`, …). An endpoint labelled "Custom" therefore gets the legacy singleton
 * slug `custom` when the account has none yet; a caller can also ask for a slug outright.
 */

// Room for a suffix inside the 48 characters UPSTREAM_SLUG_PATTERN allows.
const MAX_BASE_LENGTH = 40;

/** Used when a label has no letter or digit to make a slug from (`🚀`, `---`). */
const FALLBACK_SLUG = 'endpoint';

export function slugBase(label: string): string {
  const base = label
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+/, '')
    .slice(0, MAX_BASE_LENGTH)
    .replace(/-+$/, '');
  return base || FALLBACK_SLUG;
}

/** `base` if free, else the first free `base-N` from N = 2. */
export function firstFreeSlug(base: string, taken: ReadonlySet<string>): string {
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const candidate = `${base}-${n}`;
    if (!taken.has(candidate)) return candidate;
  }
}
