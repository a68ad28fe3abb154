import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { newSecret } from '@sbc/ids';

/**
 * The embedded default's owner key: `SBC_BOOTSTRAP_KEY` when set; else the one saved under the data
 * directory by an earlier start; else a new one, saved with mode 0600 and reported as new so it is
 * printed once. An in-memory start (`memory://`) keeps nothing on disk, its key included.
 */
export async function resolveBootstrapKey(
  dataDir: string,
  configured: string | undefined,
): Promise<{ key: string; file?: string; generated: boolean }> {
  if (configured) return { key: configured, generated: false };
  if (dataDir.startsWith('memory://')) return { key: newSecret('sbc'), generated: true };
  const file = path.join(dataDir, 'bootstrap-key');
  try {
    return { key: (await readFile(file, 'utf8')).trim(), file, generated: false };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const key = newSecret('sbc');
  // 'wx' fails if another start wrote the file in between, instead of silently replacing its key.
  await writeFile(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
  return { key, file, generated: true };
}
