import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Runs in a child process: PGlite's initdb grows the WASM memory of the process that runs it by a few
 * hundred MiB which it never gives back, so it runs where that memory ends with the process.
 */
const INITDB_CHILD = `
const [entry, dataDir, startParams] = process.argv.slice(1);
require(entry).PGlite.create({ dataDir, startParams: JSON.parse(startParams) }).then((db) => db.close());
`;

const TEMPLATE_PREFIX = '.pglite-initdb-';

/** Whether `dataDir` holds an initialised cluster: initialisation only ever renames a complete one into place. */
function isInitialised(dataDir: string): boolean {
  return existsSync(path.join(dataDir, 'PG_VERSION'));
}

/** Beside its target, on the same file system so the rename into place is atomic; a leftover from a crash is redone. */
function stagingDir(dataDir: string): string {
  return path.join(path.dirname(dataDir), `.${path.basename(dataDir)}.initialising`);
}

/** A directory with files but no cluster is someone's data: stop rather than replace it. */
async function refuseForeignFiles(dataDir: string): Promise<void> {
  const entries = await readdir(dataDir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  if (entries.length > 0) {
    throw new Error(
      `${dataDir} is not empty and holds no PostgreSQL cluster (no PG_VERSION): move it away to start afresh`,
    );
  }
}

/**
 * Makes every directory in `dataDirs` a PGlite data directory, running initdb once for all of those that lack
 * one (its output does not depend on the service) and copying the result. Each is written aside and renamed
 * into place only when complete, so a start interrupted here leaves nothing that a later start accepts.
 * Directories already initialised (by any earlier version) are left as they are.
 */
export async function initialisePgliteDirs(dataDirs: string[], startParams: string[]): Promise<void> {
  const missing = [...new Set(dataDirs.map((dir) => path.resolve(dir)))].filter((dir) => !isInitialised(dir));
  const [first] = missing;
  if (!first) return;
  for (const dataDir of missing) await refuseForeignFiles(dataDir);
  for (const dataDir of missing) await mkdir(path.dirname(dataDir), { recursive: true });
  const parent = path.dirname(first);
  // A fresh name each time, and those of earlier starts removed: the initdb of a start killed meanwhile may
  // still be running, writing into its own.
  for (const name of await readdir(parent)) {
    if (name.startsWith(TEMPLATE_PREFIX)) await rm(path.join(parent, name), { recursive: true, force: true });
  }
  const template = await mkdtemp(path.join(parent, TEMPLATE_PREFIX));
  try {
    await run(process.execPath, [
      '-e',
      INITDB_CHILD,
      require.resolve('@electric-sql/pglite'),
      template,
      JSON.stringify(startParams),
    ]);
    if (!isInitialised(template)) throw new Error(`PGlite initdb left no cluster in ${template}`);
    for (const dataDir of missing) {
      const staging = stagingDir(dataDir);
      await rm(staging, { recursive: true, force: true });
      await cp(template, staging, { recursive: true });
      // rename(2) replaces an empty directory, as an earlier version's mkdir before its initdb could leave.
      await rename(staging, dataDir);
    }
  } finally {
    await rm(template, { recursive: true, force: true });
  }
}
