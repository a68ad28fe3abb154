import { anthropicErrorType, openAiErrorType, renderErrorBody } from '@sbc/dialects';
import { ApiError, errorCodes, errorSpec, toEnvelope } from '@sbc/errors';
import { escapeHtml, inlineCode, pageShell, topNav } from './html';
import type { QuickStart } from './quickstarts';
import { agentsSection } from './agents-section';
import { cacheSection } from './cache-section';
import { routingSection } from './routing-section';

const EXAMPLE_REQUEST_ID = 'req_01JEXAMPLE0000000000000000';

function json(value: unknown): string {
  return `<pre><code>${escapeHtml(JSON.stringify(value, null, 2))}</code></pre>`;
}

function quickStartSection(quickStarts: readonly QuickStart[]): string {
  const intro =
    `<p>Every snippet below reads three variables: <code>SBC_BASE_URL</code> (this service, e.g.
<code>http://localhost:8080</code>), <code>SBC_API_KEY</code> (a caller key, <code>sbc_…</code>, made in the console ` +
    `under Keys)
and <code>SBC_MODEL</code>: <code>house</code> for a house ` +
    `model, or <code>my-engine/&lt;model&gt;</code> for a model ` +
    `of a custom
endpoint you added (last snippet). These are the very files the test suite runs against a live service, so they work ` +
    `as shown.</p>`;
  if (quickStarts.length === 0)
    return (
      `${intro}<p>The quick-start files are not shipped with this build; see <code>docs/quickstarts/</code> in ` +
      `the repository.</p>`
    );
  const toc = quickStarts.map((q) => `<li><a href="#${q.id}">${escapeHtml(q.title)}</a></li>`).join('\n');
  const bodies = quickStarts
    .map(
      (q) => `<section aria-labelledby="${q.id}" class="snippet">
<h3 id="${q.id}">${escapeHtml(q.title)}</h3>
<p class="file">docs/quickstarts/${escapeHtml(q.file)}</p>
<pre tabindex="0"><code>${escapeHtml(q.text)}</code></pre>
</section>`,
    )
    .join('\n');
  return `${intro}<ul class="toc">${toc}</ul>${bodies}`;
}

function dialectShapes(baseUrl: string): string {
  const failure = { status: 400, message: 'max_tokens must be a positive integer.', code: null, param: 'max_tokens' };
  const rest = toEnvelope(
    new ApiError('insufficient_scope', 'This key lacks a scope this route needs.', {
      extra: { required_scopes: ['keys:write'] },
    }),
    EXAMPLE_REQUEST_ID,
    baseUrl,
  );
  const statuses = [...new Set(errorCodes.map((code) => errorSpec(code).status)), 529].sort((a, b) => a - b);
  const rows = statuses
    .map(
      (status) =>
        `<tr><td>${status}</td><td><code>${openAiErrorType(status)}</code></td>` +
        `<td><code>${anthropicErrorType(status)}</code></td></tr>`,
    )
    .join('\n');
  return (
    `<p>Account and other REST routes answer every refusal in one envelope: <code>error</code> (a code below),
<code>message</code>, <code>doc_url</code> (a link to the code's entry on this page), <code>request_id</code> (also ` +
    `in the
<code>x-request-id</code> header), and <code>param</code> when one field is to blame; <code>400 ` +
    `invalid_request</code> adds
<code>issues</code>, every problem with its dotted path.</p>
${json(rest)}
<p>The model routes answer in the dialect you called, so the official SDKs raise their usual error classes.
A missing scope is the exception: it answers the envelope above on every route.</p>
<h3 id="shape-openai">Chat completions, Responses and embeddings (<code>/v1/chat/completions</code>, ` +
    `<code>/v1/responses</code>, <code>/v1/embeddings</code>)</h3>
${json(renderErrorBody('chat', failure, EXAMPLE_REQUEST_ID))}
<h3 id="shape-anthropic">Messages (<code>/v1/messages</code>, <code>/v1/messages/count_tokens</code>)</h3>
${json(renderErrorBody('messages', failure, EXAMPLE_REQUEST_ID))}
<p>A stream that fails after its first bytes ends with an ` +
    `error event in the same shape (<code>event: error</code> on ` +
    `Messages).
The HTTP status decides the type each dialect names:</p>
<div class="table-wrap" tabindex="0" role="region" aria-label="Error types by status">
<table><caption>Error type by HTTP status and dialect</caption>
<thead><tr><th scope="col">Status</th><th scope="col">OpenAI <code>error.type</code></th><th scope="col">Anthropic ` +
    `<code>error.type</code></th></tr></thead>
<tbody>${rows}</tbody></table></div>`
  );
}

function errorReference(): string {
  const toc = errorCodes.map((code) => `<li><a href="#errors-${code}"><code>${code}</code></a></li>`).join('\n');
  const entries = errorCodes
    .map((code) => {
      const spec = errorSpec(code);
      return (
        `<section class="error" aria-labelledby="errors-${code}">
<h3 id="errors-${code}"><code>${code}</code> <span class="status">HTTP ${spec.status}</span></h3>
<dl>
<dt>Meaning</dt><dd>${inlineCode(spec.message)}</dd>
<dt>What to do</dt><dd>${inlineCode(spec.action)}</dd>
<dt>Retry ` +
        `helps</dt><dd>${
          spec.retryable
            ? 'Yes, after the wait the reply names (<code>Retry-After</code>) or with ' + 'backoff.'
            : 'No: the same request fails the same way until something changes.'
        }</dd>
</dl>
</section>`
      );
    })
    .join('\n');
  return `<ul class="toc codes">${toc}</ul>\n${entries}`;
}

/** The developer guide at /developers: quick starts, error shapes and one anchored entry per registry code. */
export function renderGuidePage(options: { baseUrl: string; quickStarts: readonly QuickStart[] }): string {
  const main =
    `<h1>Developer docs</h1>
<p>One endpoint for OpenAI chat completions, OpenAI Responses and Anthropic Messages, with house models and your own
endpoints behind it. The <a href="/developers/api">API reference</a> lists every route with its scopes, bodies, ` +
    `responses and
errors; it is rendered from <a href="/docs/openapi.json">the OpenAPI document</a> this service serves.</p>
<section aria-labelledby="quick-starts"><h2 id="quick-starts">Quick starts</h2>
${quickStartSection(options.quickStarts)}</section>
<section aria-labelledby="coding-agents"><h2 id="coding-agents">Coding agents</h2>
${agentsSection(options.baseUrl)}</section>
<section aria-labelledby="routing"><h2 id="routing">Routing: fallbacks, retries and cooldowns</h2>
${routingSection()}</section>
<section aria-labelledby="response-cache"><h2 id="response-cache">Response cache</h2>
${cacheSection()}</section>
<section aria-labelledby="error-shapes"><h2 id="error-shapes">Error shapes</h2>
${dialectShapes(options.baseUrl)}</section>
<section aria-labelledby="errors"><h2 id="errors">Error codes</h2>
<p>Every refusal names one of these codes; its <code>doc_url</code> links straight to the entry.</p>
${errorReference()}</section>`;
  return pageShell({ title: 'Developer docs', main, nav: topNav('guide') });
}
