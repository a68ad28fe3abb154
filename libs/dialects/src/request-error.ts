import type { UpstreamFailure } from './ir';

/** One problem in a caller's request body; `path` is dotted (`messages.0.role`), as the gateway's 400s list them. */
export interface DialectIssue {
  path: string;
  /**
   * `required` (missing), `invalid_type` (wrong JSON type), `invalid_value` (not an allowed value or range),
   * `too_small` (empty where something is needed), `unsupported` (well formed, but the gateway cannot serve it).
   */
  code: 'required' | 'invalid_type' | 'invalid_value' | 'too_small' | 'unsupported';
  message: string;
}

/**
 * A caller body that cannot be translated. Parsers collect every problem before throwing, so a caller fixes
 * its request in one round trip; `param` names the first, as OpenAI's `error.param` does.
 */
export class DialectRequestError extends Error {
  readonly status = 400;
  readonly issues: DialectIssue[];
  readonly param: string;

  constructor(issues: DialectIssue[]) {
    const first = issues[0] ?? { path: '', code: 'invalid_value', message: 'The request body is invalid.' };
    const more = issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? 's' : ''})` : '';
    super(`${first.path ? `${first.path}: ` : ''}${first.message}${more}`);
    this.name = 'DialectRequestError';
    this.issues = issues;
    this.param = first.path;
  }

  /** The failure to hand to `renderErrorBody`, so a refusal reads like the caller's vendor wrote it. */
  toFailure(): UpstreamFailure {
    return { status: 400, message: this.message, code: null, param: this.param || null };
  }
}
