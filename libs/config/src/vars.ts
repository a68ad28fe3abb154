import { z } from 'zod';

/** Reusable variable schemas: every app spells ports, URLs and switches the same way. */

export const port = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback);

export const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

export const flag = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no'])
    .default(fallback ? 'true' : 'false')
    .transform((value) => value === 'true' || value === '1' || value === 'yes');

export const url = (protocols: string[]) =>
  z.string().refine(
    (value) => {
      try {
        return protocols.includes(new URL(value).protocol.replace(/:$/, ''));
      } catch {
        return false;
      }
    },
    { message: `must be a URL (${protocols.join(', ')})` },
  );

export const logLevel = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info');

/** A comma-separated list: its items trimmed, empty ones dropped. */
export const commaList = z.string().transform((value) =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean),
);

/** Comma-separated `host:port` list, e.g. KAFKA_BROKERS. */
export const hostList = commaList.refine(
  (items) => items.length > 0 && items.every((item) => /^[^\s:]+:\d+$/.test(item)),
  {
    message: 'must be a comma-separated list of host:port',
  },
);

/** A gRPC target `host:port`. */
export const grpcTarget = z.string().regex(/^[^\s]+:\d+$/, 'must be host:port');
