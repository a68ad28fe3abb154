import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { isErrorCode } from '@sbc/errors';

type OpenApiDocument = {
  paths: Record<
    string,
    Record<string, { responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> }>
  >;
};

const pointer = (...parts: string[]) => parts.map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/**
 * Checks answers against the service's own /docs/openapi.json: the operation must exist, the status must be
 * documented for it, and a JSON body must match the documented schema. Tests run every response through it,
 * so the document cannot drift from what the service really answers.
 */
export function createContractChecker(document: OpenApiDocument) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  ajv.addSchema(document as object, 'openapi');
  const templates = Object.keys(document.paths).map((template) => ({
    template,
    // `{model}` may hold a slash (`<slug>/<model>`); every other parameter is one segment.
    pattern: new RegExp(
      '^' +
        template
          .replace(/[.*+?^$()|[\]\\]/g, '\\$&')
          .replace(/\{([^}]+)\}/g, (_m, name: string) => (name === 'model' ? '.+' : '[^/]+')) +
        '$',
    ),
  }));
  const checked = new Set<string>();

  return {
    /** Operations (`GET /v1/keys 200`) checked so far. */
    checked,
    check(method: string, url: string, status: number, body: unknown, contentType = 'application/json'): void {
      const path = new URL(url, 'http://x').pathname;
      // The most specific template wins (`/v1/keys/whoami` over `/v1/keys/{id}`).
      const matches = templates.filter(
        (t) => t.pattern.test(path) && document.paths[t.template]![method.toLowerCase()],
      );
      matches.sort((a, b) => (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0));
      const found = matches[0];
      if (!found) throw new Error(`${method} ${path} is not in /docs/openapi.json`);
      checkDocUrl(method, path, body);
      const operation = document.paths[found.template]![method.toLowerCase()]!;
      const response = operation.responses?.[String(status)];
      if (!response)
        throw new Error(`${method} ${found.template} answered ${status}, which /docs/openapi.json does not document`);
      checked.add(`${method.toUpperCase()} ${found.template} ${status}`);
      if (!response.content) {
        if (body !== undefined && body !== '')
          throw new Error(`${method} ${found.template} ${status} is documented without a body but sent one`);
        return;
      }
      const media = response.content[contentType.split(';')[0]!.trim()];
      if (!media)
        throw new Error(`${method} ${found.template} ${status} answered ${contentType}, which is not documented`);
      if (!media.schema) return;
      const mediaType = contentType.split(';')[0]!.trim();
      const schemaPath = [
        'paths',
        found.template,
        method.toLowerCase(),
        'responses',
        String(status),
        'content',
        mediaType,
      ];
      const ref = `openapi#/${pointer(...schemaPath, 'schema')}`;
      const validate = ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });
      if (!validate(body)) {
        throw new Error(
          `${method} ${found.template} ${status} does not match ` +
            `/docs/openapi.json:\n${ajv.errorsText(validate.errors, { separator: '\n' })}\n` +
            `body: ${JSON.stringify(body).slice(0, 2000)}`,
        );
      }
    },
  };
}

/**
 * A refusal's doc_url must land on its code's entry of /developers: that page has an anchor for every
 * registry code (developer-docs.int.test.ts), so a doc_url naming its own, registered code is never dead.
 */
function checkDocUrl(method: string, path: string, body: unknown): void {
  if (typeof body !== 'object' || body === null || !('doc_url' in body)) return;
  const { doc_url: url, error } = body as { doc_url: unknown; error?: unknown };
  const code = typeof url === 'string' ? /\/developers#errors-([a-z0-9_]+)$/.exec(url)?.[1] : undefined;
  if (!code || !isErrorCode(code) || (typeof error === 'string' && error !== code)) {
    throw new Error(
      `${method} ${path} answered doc_url ${String(url)}, which is no entry of /developers for its ` +
        `code ${String(error)}`,
    );
  }
}

export type ContractChecker = ReturnType<typeof createContractChecker>;
