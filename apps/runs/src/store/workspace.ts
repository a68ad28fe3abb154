import type { PrismaClient as RunsDb } from '../generated/prisma/client';

/** Limits of a project's workspace, which lives in the database beside the runs that use it. */
export const WORKSPACE_LIMITS = { pathChars: 256, fileBytes: 256 * 1024, files: 1_000 };

export async function listWorkspaceFiles(
  db: RunsDb,
  projectId: string,
): Promise<{ path: string; bytes: number; updated_at: string }[]> {
  const rows = await db.workspaceFile.findMany({
    where: { projectId },
    orderBy: { path: 'asc' },
    take: WORKSPACE_LIMITS.files,
  });
  return rows.map((row) => ({
    path: row.path,
    bytes: Buffer.byteLength(row.content),
    updated_at: row.updatedAt.toISOString(),
  }));
}

export async function findWorkspaceFile(
  db: RunsDb,
  projectId: string,
  path: string,
): Promise<{ path: string; content: string; updatedAt: Date } | null> {
  return db.workspaceFile.findUnique({ where: { projectId_path: { projectId, path } } });
}

export async function readWorkspaceFile(db: RunsDb, projectId: string, path: string): Promise<string | undefined> {
  const row = await db.workspaceFile.findUnique({ where: { projectId_path: { projectId, path } } });
  return row?.content;
}

/** Creates or replaces a file; false when the workspace is full (a replacement always fits the count). */
export async function writeWorkspaceFile(
  db: RunsDb,
  projectId: string,
  path: string,
  content: string,
): Promise<boolean> {
  const exists = (await db.workspaceFile.count({ where: { projectId, path } })) > 0;
  if (!exists && (await db.workspaceFile.count({ where: { projectId } })) >= WORKSPACE_LIMITS.files) return false;
  await db.workspaceFile.upsert({
    where: { projectId_path: { projectId, path } },
    create: { projectId, path, content },
    update: { content, updatedAt: new Date() },
  });
  return true;
}
