import path from 'node:path';

/** Where a service's tables live: a PostgreSQL server, or PGlite files (or memory) in this process. */
export type DatabaseTarget = { kind: 'postgres'; url: string } | { kind: 'pglite'; dataDir: string };

/**
 * `DATABASE_URL` wins; without it each service keeps PGlite files under `<dataDir>/<service>` so services
 * never share tables even in one process. `memory://` keeps nothing on disk (tests).
 */
export function chooseDatabase(options: { databaseUrl?: string; dataDir: string; service: string }): DatabaseTarget {
  if (options.databaseUrl) return { kind: 'postgres', url: options.databaseUrl };
  if (options.dataDir === 'memory://') return { kind: 'pglite', dataDir: 'memory://' };
  return { kind: 'pglite', dataDir: path.resolve(options.dataDir, options.service) };
}

export function describeTarget(target: DatabaseTarget): string {
  if (target.kind === 'pglite')
    return target.dataDir === 'memory://' ? 'PGlite (memory)' : `PGlite (${target.dataDir})`;
  try {
    const url = new URL(target.url);
    return `PostgreSQL (${url.hostname}:${url.port || 5432}${url.pathname})`;
  } catch {
    return 'PostgreSQL';
  }
}
