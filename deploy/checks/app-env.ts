import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The variables each app reads, from the table tools/env-table.mjs generates into deploy/README.md out of
 * the apps' config schemas (env-table.test.ts fails when that table is stale), plus the ones every app reads.
 */
export function variablesReadBy(): Record<string, Set<string>> {
  const readme = readFileSync(path.resolve(__dirname, '../README.md'), 'utf8');
  const table = readme.slice(readme.indexOf('<!-- env-table:start'), readme.indexOf('<!-- env-table:end -->'));
  const apps: Record<string, Set<string>> = {};
  let current: Set<string> | undefined;
  const everyApp = new Set<string>();
  for (const line of table.split('\n')) {
    const heading = /^#### (.+)$/.exec(line);
    if (heading) current = heading[1] === 'every app' ? everyApp : (apps[heading[1]!] = new Set());
    const row = /^\| `([A-Z][A-Z0-9_]*)` \|/.exec(line);
    if (row && current) current.add(row[1]!);
  }
  for (const names of Object.values(apps)) for (const name of everyApp) names.add(name);
  return apps;
}
