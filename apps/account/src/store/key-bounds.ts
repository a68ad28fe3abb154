import { modelAllowed } from '@sbc/catalog';

/** What a key may reach: the dimensions along which one key can be wider than another. */
export interface KeyBounds {
  scopes: readonly string[];
  /** null = every model. */
  allowedModels: readonly string[] | null;
  /** null = every MCP tool. */
  allowedTools: readonly string[] | null;
  /** null = no cap. */
  dailyLimitCredits: number | null;
  monthlyLimitCredits: number | null;
  /** The key's own requests and tokens per minute; null = the service's ceiling alone. */
  rpm: number | null;
  tpm: number | null;
  route: string;
  /** Set on a team key. */
  orgId: string | null;
}

/** Why a key would be wider than the one minting or editing it: the body field at fault, and a message. */
export interface Widening {
  param: string;
  message: string;
  /** Scopes the key would hold that the caller lacks (only for `scopes`). */
  missingScopes?: string[];
}

function hasWildcard(glob: string): boolean {
  return glob.includes('*') || glob.includes('?');
}

/**
 * Whether every model name `inner` matches is also matched by `outer`. A `*` of `outer` may take any run of
 * `inner`'s tokens, its `?` one literal or `?` of `inner` (never a `*`, which can stand for many characters),
 * and a literal only the same literal. Sound: it never says yes wrongly; it may say no to an exotic pair
 * that is in fact covered, which then refuses the mint.
 */
export function globCovers(outer: string, inner: string): boolean {
  const o = Array.from(outer);
  const i = Array.from(inner);
  // covered[a][b]: o[a..] covers i[b..]; filled from the ends backwards.
  const covered: boolean[][] = Array.from({ length: o.length + 1 }, () => new Array<boolean>(i.length + 1).fill(false));
  covered[o.length]![i.length] = true;
  for (let a = o.length - 1; a >= 0; a--) {
    for (let b = i.length; b >= 0; b--) {
      const token = o[a];
      if (token === '*') covered[a]![b] = covered[a + 1]![b]! || (b < i.length && covered[a]![b + 1]!);
      else if (b === i.length) covered[a]![b] = false;
      else if (token === '?') covered[a]![b] = i[b] !== '*' && covered[a + 1]![b + 1]!;
      else covered[a]![b] = token === i[b] && covered[a + 1]![b + 1]!;
    }
  }
  return covered[0]![0]!;
}

/** Whether a key limited to `inner` (null = every model) reaches no model that `outer` does not. */
export function modelsCovered(outer: readonly string[] | null, inner: readonly string[] | null): boolean {
  if (outer === null) return true;
  if (inner === null) return false;
  return inner.every((glob) =>
    hasWildcard(glob) ? outer.some((candidate) => globCovers(candidate, glob)) : modelAllowed(outer, glob),
  );
}

function capWithin(callerCap: number | null, keyCap: number | null): boolean {
  return callerCap === null || (keyCap !== null && keyCap <= callerCap);
}

/**
 * The first way `key` would be wider than `caller`, or null when it is not: every scope held by the caller,
 * models within the caller's allow-list, caps and rate limits no higher than the caller's, the caller's route
 * unless it is `auto`, and the caller's team for a team key. `caller.scopes` are its effective scopes.
 */
export function wideningOf(caller: KeyBounds, key: KeyBounds): Widening | null {
  const missing = key.scopes.filter((scope) => !caller.scopes.includes(scope));
  if (missing.length > 0) {
    return {
      param: 'scopes',
      message: `The calling key lacks ${missing.join(', ')}; a key never grants more than it holds.`,
      missingScopes: missing,
    };
  }
  if (!modelsCovered(caller.allowedModels, key.allowedModels)) {
    return {
      param: 'allowed_models',
      message: 'The calling key is limited to some models; the new key must be limited to models within them.',
    };
  }
  if (!modelsCovered(caller.allowedTools, key.allowedTools)) {
    return {
      param: 'allowed_tools',
      message: 'The calling key is limited to some tools; the new key must be limited to tools within them.',
    };
  }
  if (!capWithin(caller.dailyLimitCredits, key.dailyLimitCredits)) {
    return {
      param: 'daily_limit_tokens',
      message:
        `The calling key has a daily cap of ${caller.dailyLimitCredits} credits; the new key needs a daily cap ` +
        `no higher.`,
    };
  }
  if (!capWithin(caller.monthlyLimitCredits, key.monthlyLimitCredits)) {
    return {
      param: 'monthly_limit_tokens',
      message:
        `The calling key has a monthly cap of ${caller.monthlyLimitCredits} credits; the new key needs a ` +
        `monthly cap no higher.`,
    };
  }
  for (const [param, callerLimit, keyLimit] of [
    ['rpm', caller.rpm, key.rpm],
    ['tpm', caller.tpm, key.tpm],
  ] as const) {
    if (!capWithin(callerLimit, keyLimit))
      return {
        param,
        message: `The calling key is limited to ${callerLimit} ${param}; the new key needs a ${param} limit no higher.`,
      };
  }
  if (caller.route !== 'auto' && key.route !== caller.route) {
    return { param: 'route', message: `The calling key's route is "${caller.route}"; it can only give that route.` };
  }
  if (caller.orgId !== null && key.orgId !== caller.orgId) {
    return { param: 'org_id', message: 'A team key can only give keys of its own team.' };
  }
  return null;
}
