import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * Where a service's SQL migrations are: beside a built bundle (`<bundleDir>/migrations/<service>`, copied
 * there by tools/build-app.mjs, so the embedded bundle finds every service's) or in the sources
 * (`apps/<service>/prisma/migrations`) when running from TypeScript in tests.
 */
export function locateMigrations(service: string, bundleDir: string, sourceDir: string): string {
  const candidates = [path.join(bundleDir, 'migrations', service), sourceDir];
  const found = candidates.find((dir) => existsSync(dir));
  if (!found) throw new Error(`${service}: migrations not found (looked in ${candidates.join(', ')})`);
  return found;
}
