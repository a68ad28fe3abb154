import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { OWNER_KEY, startStack, type AccountSurfaceStack } from '../support/stack';

// The quick starts on /developers are these very files: each runs here against a live edge, with a house
// model and with a model of a custom endpoint that add-endpoint.sh registers, so a broken snippet fails CI.

const run = promisify(execFile);
const DIR = path.resolve(__dirname, '../../../docs/quickstarts');
const CLIENTS = ['curl.sh', 'openai.mjs', 'anthropic.mjs', 'vercel-ai.mjs', 'langchain.mjs'];

describe('quick starts (docs/quickstarts)', () => {
  let stack: AccountSurfaceStack;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    stack = await startStack({ label: 'quickstarts' });
    env = { PATH: process.env.PATH, HOME: process.env.HOME, SBC_BASE_URL: stack.edge.url, SBC_API_KEY: OWNER_KEY };
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
  });

  function start(file: string, extra: NodeJS.ProcessEnv = {}) {
    const [command, args] = file.endsWith('.sh')
      ? ['bash', [path.join(DIR, file)]]
      : [process.execPath, [path.join(DIR, file)]];
    return run(command, args, { env: { ...env, ...extra }, cwd: DIR, timeout: 30_000 });
  }

  it('add-endpoint.sh adds a custom endpoint that answers its probe', async () => {
    const { stdout } = await start('add-endpoint.sh', { MY_ENGINE_URL: stack.sim.url, MY_ENGINE_KEY: 'sim-key' });
    expect(JSON.parse(stdout)).toMatchObject({ upstream: { slug: 'my-engine' }, probe: { ok: true } });
  });

  it.each(
    CLIENTS.flatMap((file) => [
      [file, 'house'],
      [file, 'my-engine/sim-large'],
    ]),
  )(
    '%s runs against %s and prints the reply',
    async (file, model) => {
      const { stdout } = await start(file, { SBC_MODEL: model });
      expect(stdout).toMatch(/Simulated reply/);
    },
    40_000,
  );
});
