import type { RequestHandler } from 'express';
import { SimError, sendError } from './errors';

/**
 * Endpoints that front Claude on another cloud, as the gateway meets them behind a custom endpoint or engine:
 * under `/vertex` and `/bedrock` the simulator serves what it serves at its root, except that Messages and
 * count_tokens accept only the `anthropic-beta` values in FRONTED_BETAS, as those clouds do (LiteLLM #20021,
 * t3code #1225). Vertex names the values it refuses, in Anthropic's wording; Bedrock says `invalid beta flag`
 * whichever it was. First-party (the root) takes every value.
 */
type Fronting = 'vertex' | 'bedrock';

/** The betas a fronted endpoint takes (a plausible few; anything else is refused). */
const FRONTED_BETAS: ReadonlySet<string> = new Set([
  'interleaved-thinking-2025-05-14',
  'context-management-2025-06-27',
  'effort-2025-11-24',
  'context-1m-2025-08-07',
  'token-efficient-tools-2025-02-19',
]);

const PREFIX = /^\/(vertex|bedrock)(\/.*)$/;
const FRONTING = Symbol('fronting');

type FrontedRequest = { [FRONTING]?: Fronting };

/** Strips a `/vertex` or `/bedrock` prefix and marks the request as fronted; mounted before every route. */
export const frontedPrefix: RequestHandler = (req, _res, next) => {
  const match = PREFIX.exec(req.url);
  if (match) {
    (req as FrontedRequest)[FRONTING] = match[1] as Fronting;
    req.url = match[2]!;
  }
  next();
};

/** Refuses a fronted Messages or count_tokens call that carries a beta value outside FRONTED_BETAS. */
export const refuseUnknownBetas: RequestHandler = (req, res, next) => {
  const fronting = (req as FrontedRequest)[FRONTING];
  const header = req.headers['anthropic-beta'];
  if (!fronting || typeof header !== 'string') return next();
  const unknown = header
    .split(',')
    .map((value) => value.trim())
    .filter((value) => value !== '' && !FRONTED_BETAS.has(value));
  if (unknown.length === 0) return next();
  const message =
    fronting === 'bedrock'
      ? 'invalid beta flag'
      : `Unexpected value(s) ${unknown.map((value) => `\`${value}\``).join(', ')} for the \`anthropic-beta\` ` +
        'header (sim-upstream plays an endpoint on Vertex AI, which takes fewer betas than the first-party API).';
  sendError(res, 'anthropic', new SimError(400, message));
};
