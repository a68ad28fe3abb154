import { z } from 'zod';

const HeaderMap = z.record(z.string(), z.union([z.string(), z.array(z.string())]));

const Message = z.object({
  headers: HeaderMap.default({}),
  /** A JSON value for JSON media types, the raw text for anything else (form bodies arrive as `a=1&b=2`). */
  body: z.unknown().optional(),
});

/**
 * One observed HTTP exchange. `source` is the kind of recorder (a HAR capture, a proxy, a run of the runs
 * service); it reaches the document's provenance, so it must be a short lowercase word, never free text.
 */
export const Exchange = z.object({
  method: z
    .string()
    .regex(/^[A-Za-z]{3,7}$/)
    .transform((method) => method.toLowerCase()),
  url: z.url({ protocol: /^https?$/ }),
  status: z.number().int().min(100).max(599),
  time: z.iso.datetime({ offset: true }),
  source: z.string().regex(/^[a-z][a-z0-9-]{0,31}$/),
  request: Message.default({ headers: {} }),
  response: Message.default({ headers: {} }),
});
export type Exchange = z.output<typeof Exchange>;
export type ExchangeInput = z.input<typeof Exchange>;

/** A service's recorded exchanges. The id and title are ours (they name the document), not observed values. */
export const ObservationSet = z.object({
  service: z.object({
    id: z.string().regex(/^[a-z][a-z0-9-]{1,63}$/),
    title: z.string().min(1).max(120),
    description: z.string().max(500).optional(),
  }),
  exchanges: z.array(Exchange),
});
export type ObservationSet = z.output<typeof ObservationSet>;
export type ObservationSetInput = z.input<typeof ObservationSet>;

/** Validates a recorded set; a malformed one throws a ZodError naming the path of every problem. */
export function parseObservationSet(input: unknown): ObservationSet {
  return ObservationSet.parse(input);
}

/** Validates exchanges recorded at run time before they join a shipped set. */
export function parseExchanges(input: unknown): Exchange[] {
  return z.array(Exchange).parse(input);
}

/** Header values as one string per name, names lowercased (HTTP names are case-insensitive). */
export function headerValues(headers: Record<string, string | string[]>): Map<string, string[]> {
  const values = new Map<string, string[]>();
  for (const [name, value] of Object.entries(headers)) {
    const key = name.toLowerCase();
    values.set(key, [...(values.get(key) ?? []), ...(Array.isArray(value) ? value : [value])]);
  }
  return values;
}
