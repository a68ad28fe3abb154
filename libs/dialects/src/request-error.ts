import { ApiError } from '@sbc/errors';

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

/** How a dialect words its refusals: Anthropic puts the field first (`messages.1.role: …`), OpenAI in `param`. */
export interface DialectErrorWording {
  pathInMessage?: boolean;
}

/**
 * A caller body that cannot be translated: a 400 `invalid_request`. Parsers collect every problem before
 * throwing, so a caller fixes its request in one round trip; `param` names the first, as OpenAI's `error.param`
 * does.
 */
export class DialectRequestError extends ApiError {
  declare readonly issues: DialectIssue[];

  constructor(issues: DialectIssue[], wording?: DialectErrorWording) {
    // Built as ApiError.invalid builds a 400, so the refusal a caller reads (`callerMessage`) is the first
    // issue's own message, beside `param` and `issues`. `message` is for this library's own readers (logs,
    // tests, a stack trace), who see no `param`: it names the field and how many more problems there are.
    const head = issues[0];
    const callerMessage = wording?.pathInMessage && head?.path ? `${head.path}: ${head.message}` : head?.message;
    super('invalid_request', callerMessage, { param: head?.path, issues });
    this.name = 'DialectRequestError';
    const first = issues[0] ?? { path: '', message: 'The request body is invalid.' };
    const more = issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? 's' : ''})` : '';
    this.message = `${first.path ? `${first.path}: ` : ''}${first.message}${more}`;
  }
}
