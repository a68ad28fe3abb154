/**
 * Third-party programs the end-to-end suites run as real clients or servers (coding-agent CLIs, MCP servers,
 * conformance suites), installed from the npm registry at a pinned version into a cache folder outside the
 * repository, so the project's own dependencies and lockfile never carry them and a second run reuses the copy.
 *
 * Jest decides what to skip when a test file loads, so reachability is settled synchronously there
 * (`registryPackage`); the install itself is asynchronous and runs in the suite's `beforeAll`.
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Where installed packages live: `SBC_TOOL_CACHE`, else the user's cache folder. */
export const TOOL_CACHE = process.env.SBC_TOOL_CACHE || path.join(homedir(), '.cache', 'sbc-test-tools');

const REGISTRY_TIMEOUT_MS = 20_000;
const INSTALL_TIMEOUT_MS = 5 * 60_000;

export interface RegistryPackage {
  name: string;
  /** The exact version to install (`latest` resolved when the file loaded). */
  version: string;
  /** Why the package cannot be had: the suite skips and says this. Undefined when it can. */
  unavailable?: string;
  /** Installs the package (once per cache) and answers the folder holding its `node_modules`. */
  install(): Promise<InstalledPackage>;
}

export interface InstalledPackage {
  dir: string;
  /** The path of one of the package's commands (`node_modules/.bin/<name>`). */
  bin(command: string): string;
}

/**
 * A pinned package from the registry. `version` may be `latest` (the `agents:latest` job): it is resolved
 * here, once. A package already in the cache needs no registry; otherwise the registry must answer for it.
 */
export function registryPackage(name: string, version: string): RegistryPackage {
  let exact = version;
  let unavailable: string | undefined;
  if (version === 'latest' || !existsSync(installedDir(name, version))) {
    const view = spawnSync('npm', ['view', `${name}@${version}`, 'version'], {
      encoding: 'utf8',
      timeout: REGISTRY_TIMEOUT_MS,
    });
    const answered =
      view.status === 0
        ? view.stdout
            .trim()
            .split('\n')
            .pop()
            ?.replace(/^.*'(.+)'$/, '$1')
        : '';
    if (answered) exact = answered;
    else
      unavailable = `${name}@${version} is not in ${TOOL_CACHE} and the npm registry did not answer for it (${
        view.error?.message ?? view.stderr.trim().split('\n')[0] ?? `exit ${view.status}`
      })`;
  }
  return {
    name,
    version: exact,
    unavailable,
    install: () => install(name, exact),
  };
}

function installedDir(name: string, version: string): string {
  return path.join(TOOL_CACHE, `${name.replace('/', '+')}@${version}`);
}

async function install(name: string, version: string): Promise<InstalledPackage> {
  const dir = installedDir(name, version);
  if (!existsSync(path.join(dir, 'node_modules'))) {
    await mkdir(TOOL_CACHE, { recursive: true });
    // Installed beside the cache entry and renamed into place, so a run that dies half-way (or two test files
    // installing at once) never leaves a half-installed copy that a later run would take as whole.
    const staging = await mkdtemp(`${dir}.staging-`);
    try {
      await run(
        'npm',
        [
          'install',
          '--prefix',
          staging,
          '--no-save',
          '--no-package-lock',
          '--no-audit',
          '--no-fund',
          `${name}@${version}`,
        ],
        { timeout: INSTALL_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 },
      );
      await rename(staging, dir).catch((error: NodeJS.ErrnoException) => {
        // Another installer finished first: its copy is as good as ours.
        if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
      });
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }
  return { dir, bin: (command) => path.join(dir, 'node_modules', '.bin', command) };
}
