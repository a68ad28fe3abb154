import { z } from 'zod';

/** Thrown at start when the environment does not fit an app's schema; names every bad variable. */
export class ConfigError extends Error {
  constructor(
    readonly app: string,
    readonly problems: { variable: string; message: string }[],
  ) {
    super(`${app}: invalid configuration\n${problems.map((p) => `  ${p.variable}: ${p.message}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/**
 * Parses an app's environment once against its schema. Empty strings count as unset, so `FOO=` in a
 * `.env` file falls back to the default instead of failing a URL or number check.
 */
export function parseEnv<S extends z.ZodType>(app: string, schema: S, env: Env): z.output<S> {
  const cleaned: Env = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined && value !== '') cleaned[name] = value;
  const result = schema.safeParse(cleaned);
  if (result.success) return result.data;
  throw new ConfigError(
    app,
    result.error.issues.map((issue) => ({
      variable: issue.path.map(String).join('.') || '(environment)',
      message: issue.message,
    })),
  );
}
