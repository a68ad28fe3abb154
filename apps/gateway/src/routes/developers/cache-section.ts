// The response cache as a caller meets it (docs/model-calls.md "Response cache" has the operator's side).

/** The /developers section on the exact response cache: how to opt in, what is kept, how a hit shows and bills. */
export function cacheSection(): string {
  return `<p>An exact cache of replies, off unless you ask for it. A key caches when it has <code>cache_ttl_s</code>
(seconds, set when you mint or edit it); any call can set its own with the header
<code>x-sbc-cache-ttl: &lt;seconds&gt;</code>, and <code>x-sbc-cache-ttl: 0</code> skips the cache for that call.</p>
<ul>
<li><strong>What counts as the same request.</strong> The same model and body, whatever the order of its fields and
its white space; <code>stream</code>, <code>stream_options</code>, <code>user</code> and <code>metadata</code> do not
count. Entries belong to your account, or to the team of a team key, and are never shared with anyone else.</li>
<li><strong>What is kept.</strong> Only a complete answer (HTTP 200 that ended on its own stop). A reply that calls
tools is kept only when the key has <code>cache_tools: true</code>, since a hit hands you the same calls again.</li>
<li><strong>A hit.</strong> Replayed in the dialect you called, as a body or as a stream sent at once, with
<code>x-sbc-cache: hit</code> (<code>miss</code> and <code>bypass</code> otherwise). It still counts against your
request rate, is charged 0 credits, and shows as a cache hit in your request log.</li>
</ul>`;
}
