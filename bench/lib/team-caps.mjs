// Team caps side by side, for bench/gateway.mjs with BENCH_REDIS_URL: the same chat call through the same edge
// with the bootstrap key (no caps, as before team budgets), with a team key whose call reserves against a key
// cap, a member cap, a team cap and the account in its one pipeline, and with a key that has a tokens-per-minute
// limit. The edge's Redis connections go through a counting proxy, so the figure is what crossed
// the wire: client writes per call at c=1 (one pipeline is one write; at higher concurrency writes of
// concurrent calls may coalesce, so only c=1 counts round trips exactly).
import { createServer, connect } from 'node:net';
import { cpuMs } from './procs.mjs';
import { openPool, runLoad } from './load.mjs';

/** A TCP proxy to `redisUrl` that counts the chunks the edge writes; REDIS_URL for the edge is `url`. */
export async function startCountingProxy(redisUrl) {
  const target = new URL(redisUrl);
  let writes = 0;
  const sockets = new Set();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 6379), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.on('data', (chunk) => {
      writes += 1;
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => client.write(chunk));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(redisUrl);
  url.hostname = '127.0.0.1';
  url.port = String(server.address().port);
  return {
    url: url.toString(),
    writes: () => writes,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

async function api(origin, key, method, path, body) {
  const res = await fetch(`${origin}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = await res.json();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(answer)}`);
  return answer;
}

/**
 * Two keys of the bootstrap owner: a team key on a team with team and member caps that never bind (and a key
 * daily cap), and a plain key with a tokens-per-minute limit (a tokenizer pass per call, and its window).
 */
async function mintKeys(origin, ownerKey) {
  const teamId = (await api(origin, ownerKey, 'POST', '/v1/teams', { name: 'bench' })).id;
  const budget = { credits: 1_000_000_000, period: 'monthly', time_zone: 'Europe/Paris' };
  await api(origin, ownerKey, 'PATCH', `/v1/teams/${teamId}`, { budget });
  const owner = (await api(origin, ownerKey, 'GET', '/v1/keys/whoami')).user_id;
  await api(origin, ownerKey, 'PATCH', `/v1/teams/${teamId}/members/${owner}`, { budget });
  const team = await api(origin, ownerKey, 'POST', '/v1/keys', {
    name: 'bench team key',
    org_id: teamId,
    preset: 'gateway',
    daily_limit_tokens: 2_000_000_000,
  });
  const tpm = await api(origin, ownerKey, 'POST', '/v1/keys', {
    name: 'bench tpm key',
    preset: 'gateway',
    tpm: 2_000_000_000,
  });
  return { team: team.key, tpm: tpm.key };
}

/**
 * Alternating rounds of the two keys at each concurrency: requests per second, p50, the edge's CPU per request,
 * and (at c=1) Redis writes per call. Returns the rows and prints them.
 */
export async function measureTeamCaps({ edgeOrigin, gateway, ownerKey, proxy, requestSpec, kase, requests, rounds }) {
  const keys = await mintKeys(edgeOrigin, ownerKey);
  const targets = [
    { name: 'owner key', spec: requestSpec(kase, ownerKey, 'house') },
    { name: 'team key', spec: requestSpec(kase, keys.team, 'house') },
    { name: 'tpm key', spec: requestSpec(kase, keys.tpm, 'house') },
  ];
  const rows = [];
  for (const concurrency of [1, 10]) {
    for (const t of targets) {
      t.pool = openPool(edgeOrigin, concurrency);
      t.samples = [];
      t.cpu = 0;
      t.writes = 0;
      t.count = 0;
      t.errors = 0;
      await runLoad(t.pool, t.spec, Math.max(50, 4 * concurrency), concurrency); // warm-up
    }
    for (let r = 0; r < rounds; r += 1) {
      for (const t of r % 2 === 0 ? targets : [...targets].reverse()) {
        const n = Math.ceil(requests / rounds);
        const before = { cpu: cpuMs(gateway.child.pid), writes: proxy.writes(), at: performance.now() };
        const result = await runLoad(t.pool, t.spec, n, concurrency);
        t.seconds = (t.seconds ?? 0) + (performance.now() - before.at) / 1000;
        t.cpu += cpuMs(gateway.child.pid) - before.cpu;
        t.writes += proxy.writes() - before.writes;
        t.count += n;
        t.samples.push(...result.total);
        t.errors += [...result.errors.values()].reduce((a, b) => a + b, 0);
      }
    }
    for (const t of targets) {
      await t.pool.close();
      const sorted = t.samples.sort((a, b) => a - b);
      rows.push({
        key: t.name,
        concurrency,
        rps: Math.round(t.count / t.seconds),
        p50_ms: Number(sorted[Math.floor(sorted.length / 2)].toFixed(2)),
        gateway_cpu_ms_per_req: Number((t.cpu / t.count).toFixed(3)),
        redis_writes_per_call: Number((t.writes / t.count).toFixed(2)),
        errors: t.errors,
      });
      t.seconds = 0;
    }
  }
  console.log('\nTeam caps side by side (chat, same edge; Redis writes counted by a proxy, exact at c=1):');
  for (const row of rows)
    console.log(
      `  ${row.key.padEnd(10)} c=${String(row.concurrency).padEnd(2)} ${String(row.rps).padStart(6)} rps ` +
        `p50 ${row.p50_ms} ms, edge cpu ${row.gateway_cpu_ms_per_req} ms/req, ` +
        `redis writes ${row.redis_writes_per_call}/call` +
        (row.errors ? `, ${row.errors} errors` : ''),
    );
  return rows;
}
