import { errorSpec } from '@sbc/errors';

// The routing policy as a caller meets it (docs/routing.md has the operator's side and the same example). The
// numbers come from where they are enforced or from CONTRACTS "Routing policy", which fixes them.

const COOLING_STATUS = errorSpec('upstream_cooling').status;

/** The /developers section on routing: what a model id resolves to, what is retried, and a worked example. */
export function routingSection(): string {
  return `<p>A model id resolves to an ordered list of <em>targets</em>: every one of your endpoints that lists
the model, in a weighted random order by the endpoint's <code>weight</code> (0–100, default 1; <code>0</code> is a
standby), then, on a key whose route is <code>auto</code>, the service's own deployments of the model on credits.
Route <code>byo</code> never reaches credits; route <code>credits</code> never reaches your endpoints.</p>
<ul>
<li><strong>Fallback models.</strong> <code>"models": ["&lt;id&gt;", …]</code> in the body (up to 8, in all three
dialects) names models tried in order once the named model's targets are exhausted. The reply's
<code>model</code> is the one that answered.</li>
<li><strong>Retries before the first byte.</strong> A connect error, 408, 409, 429, 500, 502, 503, 504, 529, or a
stream that broke before its first chunk moves the call to the next target; the last one left is retried once
after a short wait that honours <code>retry-after</code> up to 2 s. Nothing is retried once a byte has reached
you.</li>
<li><strong>Cooldowns.</strong> A target answering 429 with <code>retry-after</code> is skipped that long (at most
60 s); one failing 3 times in a row within 30 s is skipped 5 s, doubling to 60 s. With every target cooling you may
get <a href="#errors-upstream_cooling"><code>upstream_cooling</code></a> (HTTP ${COOLING_STATUS}) with
<code>retry-after</code>. Your hang-ups and your own 4xx never count against a target.</li>
<li><strong>Billing follows the target that served.</strong> Your own endpoint costs no credits; a credits target
is charged only when it answers.</li>
<li>Every model reply says who served it and how many attempts it took: <code>x-sbc-served-by</code>
(<code>house</code>, <code>byo:&lt;slug&gt;</code>, <code>provider:&lt;vendor&gt;/&lt;deployment&gt;</code>) and
<code>x-sbc-attempts</code>. The request log keeps both.</li>
</ul>
<h3 id="routing-example">Example</h3>
<p>Two of your endpoints list <code>gpt-6-luna</code>: <code>azure-east</code> (weight 3) and
<code>openai-direct</code> (weight 1); your key's route is <code>auto</code>.</p>
<pre><code>{"model": "gpt-6-luna", "models": ["house"], "messages": [{"role": "user", "content": "hi"}]}</code></pre>
<ol>
<li>About 3 calls in 4 start at <code>azure-east</code>. It answers 429 with <code>retry-after: 20</code>: it is
skipped for 20 s on every edge, and this call moves on to <code>openai-direct</code>, which answers. You see 200
with <code>x-sbc-served-by: byo:openai-direct</code> and <code>x-sbc-attempts: 2</code>; no credits are
charged.</li>
<li>With both endpoints down, the call goes on to the service's OpenAI deployment and is billed in credits:
<code>x-sbc-served-by: provider:openai/east</code>.</li>
<li>With OpenAI down as well, <code>house</code> answers, and the reply says <code>"model": "house"</code>.</li>
</ol>`;
}
