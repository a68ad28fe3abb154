import pino, { type Logger } from 'pino';

export type { Logger };

/**
 * Header and field names whose values never reach a log line. Logs carry ids and outcomes, never a key,
 * secret, prompt or body.
 */
const redactPaths = [
  'authorization',
  '*.authorization',
  'headers.authorization',
  'headers["x-api-key"]',
  '*["x-api-key"]',
  'key',
  '*.key',
  'secret',
  '*.secret',
  'password',
  '*.password',
  'token',
  '*.token',
  'api_key',
  '*.api_key',
];

export interface LoggerOptions {
  service: string;
  level?: string;
  /** Where lines go; defaults to stdout. Tests pass a stream to read what was logged. */
  destination?: pino.DestinationStream;
}

export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: { service: options.service },
      redact: { paths: redactPaths, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    options.destination,
  );
}
