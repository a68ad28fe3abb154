import { Pool } from 'undici';
const [url, n, c, model, path] = [process.argv[2], +process.argv[3], +process.argv[4], process.argv[5] ?? 'house', process.argv[6] ?? '/v1/chat/completions'];
const pool = new Pool(url, { connections: c });
const body = JSON.stringify({ model, max_tokens: 256, messages: [{ role: 'user', content: 'Benchmark prompt: reply with exactly twenty tokens. sim-tokens:20' }] });
let done = 0; const t0 = performance.now();
async function worker() { while (done < n) { done++; const r = await pool.request({ path, method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sbc_smoke_key_0123456789abcdefghij', 'x-api-key': 'sbc_smoke_key_0123456789abcdefghij' }, body }); await r.body.text(); if (r.statusCode !== 200) { console.log(r.statusCode); process.exit(1);} } }
await Promise.all(Array.from({ length: c }, worker));
console.log((n / ((performance.now() - t0) / 1000)).toFixed(0), 'rps');
await pool.close();
