import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { collect, freePort, waitReady, type Child } from '@sbc/testing';
import { exited } from '../support/embedded-bundle';

/**
 * No hidden class is made per model call on the edge. V8 logs every map (hidden class) it makes (`--log-maps`); in
 * an edge that has served a hundred and fifty calls of each kind, the next as many should make almost none. One
 * made per call costs a microsecond or so, misses the inline cache of every function that reads the object, and
 * leaves old-space garbage that only a full collection clears. Node 20 makes one whenever a literal that begins as a
 * spread copy gains a key (`{ ...outcome, status }`); any Node makes one per call for an object given a key of
 * its own per call, or turned into a dictionary by `delete`. (docs/benchmarks.md, "Hidden classes made per call".)
 *
 * The edge runs as its own process, as in services mode, built as `npm run build` bundles it: the simulator and the
 * account service beside it (their maps are theirs; the embedded bundle would mix them into the log). Between the
 * two rounds the test sends a call whose body has a key no other has: the map JSON.parse makes for it marks where
 * the second round begins in the log.
 */
const DIST = path.resolve(__dirname, '../../../dist/apps');
const SIM_KEY = 'sim-hidden-classes-key';
const KEY = 'sbc_hidden_classes_key_0123456789abcd';
const ROUND = 150; // calls of each kind per round
const CONCURRENCY = 5;
// Per kind of map event and source site, what the second round may make. A site that makes one map per call of any
// one kind makes ROUND; the sites tied to no call (V8's built-ins, per connection, per timer) made at most 60 in the
// round's 1,351 calls, on Node 20 and 24.
const MOST_PER_SITE = (ROUND * 4) / 5;

interface Kind {
  path: string;
  body: Record<string, unknown>;
}

const text = { role: 'user', content: 'hello' };
const KINDS: Kind[] = [
  { path: '/v1/chat/completions', body: { model: 'house', messages: [text] } },
  { path: '/v1/chat/completions', body: { model: 'house', messages: [text], stream: true } },
  { path: '/v1/messages', body: { model: 'house-omni', max_tokens: 50, messages: [text] } },
  { path: '/v1/messages', body: { model: 'house-omni', max_tokens: 50, messages: [text], stream: true } },
  { path: '/v1/responses', body: { model: 'house', input: 'hello', store: false } },
  { path: '/v1/responses', body: { model: 'house', input: 'hello', store: false, stream: true } },
  // A caller in one dialect served by an engine that speaks the other: translated both ways.
  { path: '/v1/chat/completions', body: { model: 'house-omni', messages: [text] } },
  { path: '/v1/messages', body: { model: 'house', max_tokens: 50, messages: [text] } },
  { path: '/v1/embeddings', body: { model: 'house-embed', input: 'hello' } },
];

/** `dist/apps/<app>/main.js` as its own process, with Node's `nodeArgs`. */
function start(app: string, env: Record<string, string>, nodeArgs: readonly string[] = []): Child {
  const entry = path.join(DIST, app, 'main.js');
  const childEnv = { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env };
  return collect(app, spawn(process.execPath, [...nodeArgs, entry], { env: childEnv }));
}

async function call(url: string, kind: Kind): Promise<void> {
  const res = await fetch(url + kind.path, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify(kind.body),
  });
  const body = await res.text();
  if (res.status !== 200) throw new Error(`${kind.path} ${JSON.stringify(kind.body)}: ${res.status} ${body}`);
}

async function round(url: string): Promise<void> {
  const queue = KINDS.flatMap((kind) => Array.from({ length: ROUND }, () => kind));
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let kind = queue.pop(); kind; kind = queue.pop()) await call(url, kind);
    }),
  );
}

/** A map event as V8 logs it: `map,<type>,<µs>,<from>,<to>,<pc>,<line>,<column>,<reason>,<name>`. */
interface MapEvent {
  type: string;
  time: number;
  pc: number;
  site: string;
}

function mapEvents(log: string): MapEvent[] {
  const events: MapEvent[] = [];
  for (const line of log.split('\n')) {
    if (!line.startsWith('map,')) continue;
    const [, type = '', time = '', , , pc = '', row = '', column = '', , ...name] = line.split(',');
    events.push({
      type,
      time: Number(time),
      pc: parseInt(pc, 16),
      site: `${type} at ${row}:${column} ${name.join(',')}`,
    });
  }
  return events;
}

/** The function whose code holds `pc`, from the log's code-creation events, for a readable failure. */
function functionAt(log: string, pc: number): string {
  let found = '?';
  for (const line of log.split('\n')) {
    if (!line.startsWith('code-creation,')) continue;
    const fields = line.split(',');
    const start = parseInt(fields[4] ?? '', 16);
    if (start <= pc && pc < start + Number(fields[5])) found = fields.slice(6, 8).join(',');
  }
  return found;
}

describe('hidden classes on the model path', () => {
  let dir = '';
  const children: Child[] = [];
  beforeAll(async () => {
    for (const app of ['gateway', 'account', 'sim-upstream'])
      if (!existsSync(path.join(DIST, app, 'main.js')))
        throw new Error(`dist/apps/${app}/main.js is missing: run "npm run build" first (npm test does)`);
    dir = await mkdtemp(path.join(tmpdir(), 'sbc-hidden-classes-'));
  });
  afterAll(async () => {
    for (const child of children) if (child.process.exitCode === null) child.process.kill('SIGKILL');
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('an edge that has served every kind of call makes next to no maps for more of them', async () => {
    const [simPort, grpcPort, accountHttpPort, edgePort] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
    ];
    const sim = start('sim-upstream', {
      SIM_PORT: String(simPort),
      SIM_HOST: '127.0.0.1',
      SIM_LATENCY_MS: '0',
      SIM_TOKENS_PER_SECOND: '0',
      SIM_API_KEY: SIM_KEY,
    });
    children.push(sim);
    const account = start('account', {
      SBC_DATA_DIR: path.join(dir, 'account'),
      SBC_BOOTSTRAP_KEY: KEY,
      ACCOUNT_GRPC_PORT: String(grpcPort),
      ACCOUNT_HTTP_PORT: String(accountHttpPort),
    });
    children.push(account);
    await waitReady(sim, `http://127.0.0.1:${simPort}/readyz`);
    await waitReady(account, `http://127.0.0.1:${accountHttpPort}/readyz`);
    const engine = (dialect: string, model: string) => [
      { dialect, base_url: `http://127.0.0.1:${simPort}/v1`, api_key: SIM_KEY, model },
    ];
    const logfile = path.join(dir, 'v8.log');
    const edge = start(
      'gateway',
      {
        ACCOUNT_GRPC_TARGET: `127.0.0.1:${grpcPort}`,
        PORT: String(edgePort),
        HOST: '127.0.0.1',
        RATE_LIMIT_PER_MINUTE: '1000000',
        // No broker here: the edge still encodes every usage event, and sends it nowhere.
        USAGE_EVENTS: 'off',
        HOUSE_ENGINES: JSON.stringify({
          house: engine('openai', 'sim-large'),
          'house-omni': engine('anthropic', 'sim-large'),
          'house-embed': engine('openai', 'sim-embed'),
        }),
      },
      ['--log-maps', '--no-log-maps-details', `--logfile=${logfile}`, '--no-logfile-per-isolate'],
    );
    children.push(edge);
    const url = `http://127.0.0.1:${edgePort}`;
    await waitReady(edge, `${url}/readyz`);

    await round(url);
    const marker = `sbc_marker_${process.pid}_${Date.now()}`;
    await call(url, { path: '/v1/chat/completions', body: { ...KINDS[0]!.body, [marker]: 1 } });
    await round(url);
    edge.process.kill('SIGTERM'); // the log is written out as the process exits
    await exited(edge.process, 30_000);

    const log = await readFile(logfile, 'utf8');
    const events = mapEvents(log);
    const mark = events.find((event) => event.site.endsWith(` ${marker}`));
    expect(mark).toBeDefined();
    const bySite = new Map<string, MapEvent[]>();
    for (const event of events)
      if (event.time > mark!.time) bySite.set(event.site, [...(bySite.get(event.site) ?? []), event]);
    const perCall = [...bySite]
      .filter(([, made]) => made.length > MOST_PER_SITE)
      .map(([site, made]) => `${made.length} × ${site} in ${functionAt(log, made[0]!.pc)}`);
    expect(perCall).toEqual([]);
  }, 180_000);
});
