import { errorCodes, errorSpec } from '@sbc/errors';
import { escapeHtml, inlineCode, pageShell, topNav } from './html';

/** The parts of an OpenAPI 3.1 document this page reads; the rest is passed over. */
type Schema = Record<string, unknown>;
interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  'x-required-scopes'?: string[];
  'x-rate-cost'?: number;
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string; required?: boolean; description?: string; schema?: Schema }[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: Schema }> }>;
}
export interface OpenApiDocument {
  info?: { title?: string; version?: string };
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const MAX_DEPTH = 3;

function refName(schema: Schema): string | undefined {
  return typeof schema.$ref === 'string' ? schema.$ref.replace('#/components/schemas/', '') : undefined;
}

/** A one-line type: `string`, `array of Model`, `"a" | "b"`, with named schemas linked. */
function typeLabel(schema: Schema | undefined): string {
  if (!schema) return 'any';
  const ref = refName(schema);
  if (ref) return `<a href="#schema-${escapeHtml(ref)}">${escapeHtml(ref)}</a>`;
  if (schema.const !== undefined) return `<code>${escapeHtml(JSON.stringify(schema.const))}</code>`;
  if (Array.isArray(schema.enum))
    return schema.enum.map((v) => `<code>${escapeHtml(JSON.stringify(v))}</code>`).join(' | ');
  const union = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (Array.isArray(union)) return union.map(typeLabel).join(' | ');
  if (schema.type === 'array') return `array of ${typeLabel(schema.items as Schema | undefined)}`;
  if (Array.isArray(schema.type)) return schema.type.map(String).join(' | ');
  return escapeHtml(String(schema.type ?? 'any'));
}

/** Rows for an object's fields, nested inline objects as dotted names (named schemas link instead). */
function fieldRows(schema: Schema, prefix = '', depth = 0): string[] {
  const properties = schema.properties as Record<string, Schema> | undefined;
  if (!properties || depth >= MAX_DEPTH) return [];
  const required = new Set((schema.required as string[] | undefined) ?? []);
  return Object.entries(properties).flatMap(([name, field]) => {
    const description = typeof field.description === 'string' ? inlineCode(field.description) : '';
    const requiredMark = required.has(name) ? ' <span class="req">required</span>' : '';
    const row =
      `<tr><td><code>${escapeHtml(prefix + name)}</code>${requiredMark}</td>` +
      `<td>${typeLabel(field)}</td><td>${description}</td></tr>`;
    const inner = field.type === 'object' && !refName(field) ? fieldRows(field, `${prefix}${name}.`, depth + 1) : [];
    return [row, ...inner];
  });
}

/** A schema with its fields listed; a named one is looked up so an operation shows its body's fields in place. */
function schemaBlock(schema: Schema | undefined, label: string, schemas: Record<string, Schema> = {}): string {
  if (!schema) return '';
  const ref = refName(schema);
  const rows = fieldRows(ref ? (schemas[ref] ?? {}) : schema);
  const table = rows.length
    ? `<div class="table-wrap" tabindex="0" role="region" aria-label="${escapeHtml(label)}"><table><thead><tr><th ` +
      `scope="col">Field</th><th scope="col">Type</th><th ` +
      `scope="col">Description</th></tr></thead><tbody>${rows.join('')}</tbody></table></div>`
    : '';
  return `<p>${escapeHtml(label)}: ${typeLabel(schema)}</p>${table}`;
}

function codesFor(status: number): string {
  const codes = errorCodes.filter((code) => errorSpec(code).status === status);
  return codes.map((code) => `<a href="/developers#errors-${code}"><code>${code}</code></a>`).join(', ');
}

function operationId(method: string, path: string, op: Operation): string {
  return `op-${op.operationId ?? `${method}-${path}`.replace(/[^A-Za-z0-9_-]+/g, '-')}`;
}

function renderOperation(method: string, path: string, op: Operation, schemas: Record<string, Schema>): string {
  const id = operationId(method, path, op);
  const scopes = op['x-required-scopes'];
  const auth = scopes?.length
    ? `Scopes: ${scopes.map((s) => `<code>${escapeHtml(s)}</code>`).join(', ')}`
    : op.security?.length
      ? 'Scopes: none (any valid key or session)'
      : 'No credential needed';
  const parameters = op.parameters?.length
    ? `<div class="table-wrap" tabindex="0" role="region" aria-label="Parameters ` +
      `of ${escapeHtml(`${method.toUpperCase()} ${path}`)}"><table><thead><tr><th scope="col">Parameter</th><th ` +
      `scope="col">In</th><th scope="col">Type</th><th scope="col">Description</th></tr></thead><tbody>${op.parameters
        .map(
          (p) =>
            `<tr><td><code>${escapeHtml(p.name)}</code>${p.required ? ' <span class="req">required</span>' : ''}</td>` +
            `<td>${escapeHtml(p.in)}</td><td>${typeLabel(p.schema)}</td>` +
            `<td>${p.description ? inlineCode(p.description) : ''}</td></tr>`,
        )
        .join('')}</tbody></table></div>`
    : '';
  const body = Object.entries(op.requestBody?.content ?? {})
    .map(([type, media]) => schemaBlock(media.schema, `Body (${type})`, schemas))
    .join('');
  const responses = Object.entries(op.responses ?? {})
    .map(([status, response]) => {
      const schema = Object.values(response.content ?? {})[0]?.schema;
      const codes = Number(status) >= 400 ? codesFor(Number(status)) : '';
      const description = response.description ? inlineCode(response.description) : '';
      const type = schema ? ` (${typeLabel(schema)})` : '';
      const codeList = codes ? `<br><span class="codes">Codes with this status: ${codes}</span>` : '';
      return `<li><strong>${escapeHtml(status)}</strong> ${description}${type}${codeList}</li>`;
    })
    .join('');
  return (
    `<section class="op" aria-labelledby="${id}">
<h3 id="${id}"><span class="method">${method.toUpperCase()}</span> ` +
    `<code>${escapeHtml(path)}</code>${op.summary ? ` <span class="summary">${escapeHtml(op.summary)}</span>` : ''}</h3>
<p class="auth">${auth}${
      op['x-rate-cost'] && op['x-rate-cost'] > 1 ? `; costs ${op['x-rate-cost']} requests of the ` + `rate limit` : ''
    }</p>
${op.description ? `<p>${inlineCode(op.description)}</p>` : ''}
${parameters}${body}
<h4>Responses</h4><ul class="responses">${responses}</ul>
</section>`
  );
}

/** The API reference at /developers/api: every operation of the served OpenAPI document, then its schemas. */
export function renderApiReference(document: OpenApiDocument): string {
  const schemas = document.components?.schemas ?? {};
  const byTag = new Map<string, string[]>();
  const toc = new Map<string, string[]>();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const tag = op.tags?.[0] ?? 'Other';
      byTag.set(tag, [...(byTag.get(tag) ?? []), renderOperation(method, path, op, schemas)]);
      toc.set(tag, [
        ...(toc.get(tag) ?? []),
        `<li><a href="#${operationId(method, path, op)}">${method.toUpperCase()} ` +
          `<code>${escapeHtml(path)}</code></a></li>`,
      ]);
    }
  }
  const tagId = (tag: string) => `tag-${tag.replace(/[^A-Za-z0-9]+/g, '-').toLowerCase()}`;
  const contents = [...toc]
    .map(([tag, items]) => `<li><a href="#${tagId(tag)}">${escapeHtml(tag)}</a><ul>${items.join('')}</ul></li>`)
    .join('');
  const sections = [...byTag]
    .map(
      ([tag, ops]) =>
        `<section aria-labelledby="${tagId(tag)}"><h2 ` +
        `id="${tagId(tag)}">${escapeHtml(tag)}</h2>${ops.join('\n')}</section>`,
    )
    .join('\n');
  const schemaSections = Object.entries(schemas)
    .map(
      ([name, schema]) =>
        `<section class="schema" aria-labelledby="schema-${escapeHtml(name)}"><h3 ` +
        `id="schema-${escapeHtml(name)}">${escapeHtml(name)}</h3>` +
        `${typeof schema.description === 'string' ? `<p>${inlineCode(schema.description)}</p>` : ''}` +
        `${schemaBlock(schema, 'Type')}</section>`,
    )
    .join('\n');
  const main =
    `<h1>API reference</h1>
<p>Rendered from <a ` +
    `href="/docs/openapi.json">/docs/openapi.json</a>` +
    `${document.info?.version ? ` (version ${escapeHtml(document.info.version)})` : ''}, the same document the
service validates its routes with. Error codes link to their entries in the <a href="/developers#errors">error ` +
    `reference</a>.</p>
<nav aria-label="Operations"><ul class="toc">${contents}</ul></nav>
${sections}
<section aria-labelledby="schemas"><h2 id="schemas">Schemas</h2>
${schemaSections}</section>`;
  return pageShell({ title: 'API reference', main, nav: topNav('api') });
}
