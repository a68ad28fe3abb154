import {
  classifySegment,
  isCollectionName,
  isValueKind,
  singular,
  splitExtension,
  toParamName,
  type SegmentKind,
} from './classify';

/** One observed path with the structured bodies of its exchange (searched for the path's values, to name them). */
export interface PathSample {
  path: string;
  bodies: readonly unknown[];
}

interface TemplateParam {
  name: string;
  /** Every kind its values had (`integer`, `slug`, `uuid`, ...). */
  kinds: SegmentKind[];
}

/** A learned path template and what it covers. Nothing here holds a concrete value. */
export interface PathTemplate {
  template: string;
  params: TemplateParam[];
  observations: number;
  /** Concrete paths as placeholder patterns (`/repos/{slug}/{slug}/issues/{integer}`) with their counts. */
  covers: Map<string, number>;
}

interface Segment {
  /** The decoded segment with its extension. */
  raw: string;
  ext: string;
  kind: SegmentKind;
}

interface Row {
  index: number;
  segments: Segment[];
  bodies: readonly unknown[];
}

type Part = { literal: string; version: boolean } | { param: string; ext: string };

function segmentsOf(path: string): Segment[] {
  return path
    .split('/')
    .filter((segment) => segment !== '')
    .map((encoded, depth) => {
      let raw: string;
      try {
        raw = decodeURIComponent(encoded);
      } catch {
        return { raw: encoded, ext: '', kind: 'string' as const };
      }
      const { base, ext } = splitExtension(raw);
      return { raw, ext, kind: classifySegment(base, depth) };
    });
}

// Keys whose value names the resource itself; a slug or integer is only taken as "echoed" under one of these.
const IDENTIFYING_KEY =
  /^(id|uuid|key|slug|name|login|username|handle|number|full_name|code)$|_(id|number|slug|name|key)$/;
// Keys too generic to name a parameter by themselves: the enclosing key or the collection names it instead.
const GENERIC_KEY = /^(id|uuid|key|slug|name|login|username|handle)$/;
const ECHO_DEPTH = 3;

/**
 * Where a path value reappears in the exchange's bodies (objects only; array items are other resources).
 * Each hit is the parameter name it suggests, or null when the key is too generic to name it.
 */
function echoes(bodies: readonly unknown[], segment: Segment): Array<string | null> {
  const value = segment.ext ? segment.raw.slice(0, -segment.ext.length) : segment.raw;
  const strict = segment.kind === 'slug' || segment.kind === 'integer';
  const hits: Array<string | null> = [];
  const visit = (node: unknown, keys: string[]) => {
    if (node === null || typeof node !== 'object' || Array.isArray(node) || keys.length >= ECHO_DEPTH) return;
    for (const [key, item] of Object.entries(node)) {
      if (
        (typeof item === 'string' || typeof item === 'number') &&
        String(item) === value &&
        (!strict || IDENTIFYING_KEY.test(key))
      ) {
        hits.push(!GENERIC_KEY.test(key) ? toParamName(key) : keys.length > 0 ? toParamName(keys.at(-1)!) : null);
      } else visit(item, [...keys, key]);
    }
  };
  for (const body of bodies) visit(body, []);
  return hits;
}

const concretePrefix = (row: Row, depth: number) =>
  row.segments
    .slice(0, depth)
    .map((segment) => segment.raw)
    .join('/');

/**
 * Whether the word-like segments at this position are values rather than literals. Decided for the whole
 * position at once, so a value seen only once is not left behind as a literal:
 * - after the root or a version segment: literal (`/repos`, `/v1/customers`);
 * - a word that recurs under two different concrete prefixes is vocabulary (`issues` under every repo): literal;
 * - a word the exchange echoes back under an identifying key (`login`, `name`, `id`) is a value;
 * - different words followed by the same word (`octo/hello/issues`, `acme/widgets/issues`) are values,
 *   unless every one of them is a collection name (`/billing/invoices/export`, `/billing/payments/export`);
 * - several different words right after a collection name (`/repos/octo`, `/repos/acme`) are values;
 * - anything else, including a word constant across observations, stays literal.
 */
function wordsAreValues(rows: Row[], depth: number, parent: Part | undefined): boolean {
  if (!parent || ('literal' in parent && parent.version)) return false;
  const prefixes = new Map<string, Set<string>>();
  for (const row of rows) {
    const raw = row.segments[depth]!.raw;
    let seen = prefixes.get(raw);
    if (!seen) prefixes.set(raw, (seen = new Set()));
    seen.add(concretePrefix(row, depth));
  }
  if ([...prefixes.values()].some((seen) => seen.size >= 2)) return false;
  if (rows.some((row) => echoes(row.bodies, row.segments[depth]!).length > 0)) return true;
  // Different words followed by the same word (`hello/issues`, `widgets/issues`) are instances of one thing.
  const followed = new Map<string, Set<string>>();
  for (const row of rows) {
    const after = row.segments[depth + 1];
    if (after?.kind !== 'slug') continue;
    let values = followed.get(after.raw);
    if (!values) followed.set(after.raw, (values = new Set()));
    values.add(row.segments[depth]!.raw);
  }
  const allCollections = rows.every((row) => isCollectionName(row.segments[depth]!.raw));
  if (!allCollections && [...followed.values()].some((values) => values.size >= 2)) return true;
  return 'literal' in parent && isCollectionName(parent.literal) && prefixes.size >= 2;
}

/** The parameter's name: the key most often echoing its values, else the collection it belongs to. */
function paramName(rows: Row[], depth: number, prefix: Part[]): string {
  const votes = new Map<string, number>();
  for (const row of rows) {
    for (const name of echoes(row.bodies, row.segments[depth]!)) if (name) votes.set(name, (votes.get(name) ?? 0) + 1);
  }
  const voted = [...votes].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0];
  const collection = [...prefix]
    .reverse()
    .find((part): part is Extract<Part, { literal: string }> => 'literal' in part && !part.version);
  const kinds = new Set(rows.map((row) => row.segments[depth]!.kind));
  const fallback = collection
    ? toParamName(singular(collection.literal))
    : kinds.size === 1 && kinds.has('date')
      ? 'date'
      : 'id';
  const name = voted ?? fallback;
  const used = new Set(prefix.flatMap((part) => ('param' in part ? [part.param] : [])));
  let unique = name;
  for (let n = 2; used.has(unique); n += 1) unique = `${name}${n}`;
  return unique;
}

function render(parts: Part[], placeholder: (part: Extract<Part, { param: string }>, depth: number) => string): string {
  return (
    '/' + parts.map((part, depth) => ('literal' in part ? part.literal : placeholder(part, depth) + part.ext)).join('/')
  );
}

/**
 * Learns path templates from concrete paths. Value-like segments (integers, UUIDs, dates, emails, opaque ids,
 * anything not word-like) always become parameters; word-like segments follow `wordsAreValues`. Returns the
 * templates and, per sample (in input order), the template that covers it.
 */
export function inferTemplates(samples: readonly PathSample[]): { templates: PathTemplate[]; templateOf: string[] } {
  const templates = new Map<string, PathTemplate>();
  const templateOf: string[] = new Array(samples.length);

  const build = (rows: Row[], depth: number, prefix: Part[]) => {
    const ending = rows.filter((row) => row.segments.length === depth);
    if (ending.length > 0) {
      // Each node of the tree is visited once, so `ending` is every sample of this template.
      const template = render(prefix, (part) => `{${part.param}}`);
      const covers = new Map<string, number>();
      for (const row of ending) {
        templateOf[row.index] = template;
        const pattern = render(prefix, (_part, at) => `{${row.segments[at]!.kind}}`);
        covers.set(pattern, (covers.get(pattern) ?? 0) + 1);
      }
      const params = prefix.flatMap((part, at) =>
        'param' in part
          ? [{ name: part.param, kinds: [...new Set(ending.map((row) => row.segments[at]!.kind))].sort() }]
          : [],
      );
      templates.set(template, { template, params, observations: ending.length, covers });
    }
    const going = rows.filter((row) => row.segments.length > depth);
    if (going.length === 0) return;
    const slugs = going.filter((row) => row.segments[depth]!.kind === 'slug');
    const slugsAreValues = slugs.length > 0 && wordsAreValues(slugs, depth, prefix.at(-1));

    const literals = new Map<string, Row[]>();
    const params = new Map<string, Row[]>();
    for (const row of going) {
      const segment = row.segments[depth]!;
      const asParam = isValueKind(segment.kind) || (segment.kind === 'slug' && slugsAreValues);
      const groups = asParam ? params : literals;
      const key = asParam ? segment.ext : segment.raw;
      const group = groups.get(key);
      if (group) group.push(row);
      else groups.set(key, [row]);
    }
    for (const [literal, group] of [...literals].sort((a, b) => a[0].localeCompare(b[0]))) {
      build(group, depth + 1, [...prefix, { literal, version: group[0]!.segments[depth]!.kind === 'version' }]);
    }
    for (const [ext, group] of [...params].sort((a, b) => a[0].localeCompare(b[0]))) {
      build(group, depth + 1, [...prefix, { param: paramName(group, depth, prefix), ext }]);
    }
  };

  build(
    samples.map((sample, index) => ({ index, segments: segmentsOf(sample.path), bodies: sample.bodies })),
    0,
    [],
  );
  return { templates: [...templates.values()].sort((a, b) => a.template.localeCompare(b.template)), templateOf };
}
