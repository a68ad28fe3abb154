import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openDatabase, initialiseDatabases, type PrismaLike } from './open';

const migrationsDir = path.join(__dirname, '__fixtures__/migrations');
const noPrisma = (): PrismaLike => ({ $disconnect: async () => undefined });
// Each initdb takes seconds, and more on a loaded machine.
jest.setTimeout(120_000);

async function open(dataDir: string) {
  return openDatabase({ kind: 'pglite', dataDir }, { service: 'svc', migrationsDir, createClient: noPrisma });
}

describe('PGlite data directories', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'sbc-pglite-init-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('a first open initialises an empty directory, and a later open keeps its data', async () => {
    const dataDir = path.join(root, 'svc');
    const first = await open(dataDir);
    expect(first.applied).toEqual(['0001_notes.sql', '0002_note_created_at.sql']);
    await first.sql.query('INSERT INTO notes (id, body) VALUES ($1, $2)', ['n1', 'kept']);
    await first.close();

    const again = await open(dataDir);
    expect(again.applied).toEqual([]);
    expect(await again.sql.query('SELECT id, body FROM notes')).toEqual([{ id: 'n1', body: 'kept' }]);
    await again.close();
    expect(await readdir(root)).toEqual(['svc']);
  });

  it(
    'initialises several services at once, each its own ' + 'cluster, and skips targets that are not PGlite files',
    async () => {
      const [dirA, dirB] = [path.join(root, 'a'), path.join(root, 'b')];
      await initialiseDatabases([
        { kind: 'pglite', dataDir: dirA },
        { kind: 'pglite', dataDir: dirB },
        { kind: 'pglite', dataDir: 'memory://' },
        { kind: 'postgres', url: 'postgres://nowhere/x' },
      ]);
      expect((await readdir(root)).sort()).toEqual(['a', 'b']);

      const [a, b] = [await open(dirA), await open(dirB)];
      await a.sql.query('INSERT INTO notes (id, body) VALUES ($1, $2)', ['only-a', 'x']);
      expect(await b.sql.query('SELECT id FROM notes')).toEqual([]);
      await a.close();
      await b.close();
    },
  );

  it('redoes an initialisation that a crash interrupted, whatever it left behind', async () => {
    const dataDir = path.join(root, 'svc');
    // What a kill can leave: an empty target, a half-copied staging directory, a half-made initdb template.
    await mkdir(dataDir);
    for (const partial of ['.svc.initialising', '.pglite-initdb-Xq3v9a']) {
      await mkdir(path.join(root, partial, 'base'), { recursive: true });
      await writeFile(path.join(root, partial, 'PG_VERSION'), '17\n');
    }
    const db = await open(dataDir);
    expect(db.applied).toEqual(['0001_notes.sql', '0002_note_created_at.sql']);
    await db.sql.query('INSERT INTO notes (id, body) VALUES ($1, $2)', ['n1', 'works']);
    await db.close();
    expect(await readdir(root)).toEqual(['svc']);
  });

  it('refuses a directory that has files but no cluster, and leaves it as it was', async () => {
    const dataDir = path.join(root, 'svc');
    await mkdir(dataDir);
    await writeFile(path.join(dataDir, 'notes.txt'), 'mine');
    await expect(open(dataDir)).rejects.toThrow(/is not empty and holds no PostgreSQL cluster/);
    expect(await readdir(dataDir)).toEqual(['notes.txt']);
    expect(await readdir(root)).toEqual(['svc']);
  });
});
