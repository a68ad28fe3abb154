import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { variablesReadBy } from './app-env';

const ROOT = path.resolve(__dirname, '../..');

describe("deploy/README.md's environment table", () => {
  it("is what tools/env-table.mjs generates from the apps' config schemas today", () => {
    const result = spawnSync(process.execPath, [path.join(ROOT, 'tools/env-table.mjs'), '--check'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect({ status: result.status, output: `${result.stdout}${result.stderr}` }).toEqual({ status: 0, output: '' });
  }, 60_000);

  it('names the variables of all six images, each with the ones every app reads', () => {
    const apps = variablesReadBy();
    expect(Object.keys(apps).sort()).toEqual([
      'account',
      'gateway',
      'runs',
      'sim-upstream',
      'usage-ledger',
      'x-builds',
    ]);
    expect(apps.gateway).toContain('HOUSE_ENGINES');
    expect(apps.account).toContain('UPSTREAM_SECRETS_KEY');
    expect(apps['usage-ledger']).not.toContain('HOUSE_ENGINES');
    for (const names of Object.values(apps)) expect(names).toContain('OTEL_EXPORTER_OTLP_ENDPOINT');
  });
});
