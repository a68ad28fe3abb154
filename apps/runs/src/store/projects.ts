import { ApiError } from '@sbc/errors';
import { newId } from '@sbc/ids';
import { keysetRange, toPage, type ListEnvelope, type PageQuery } from '@sbc/pagination';
import type { PrismaClient as RunsDb, Project as ProjectRow } from '../generated/prisma/client';

export type { ProjectRow };

function projectNotFound(): ApiError {
  return new ApiError('not_found', 'No such project on this account.', { param: 'project_id' });
}

export function createProject(
  db: RunsDb,
  input: { accountId: string; name: string; instructions: string | null; defaultModel: string | null },
): Promise<ProjectRow> {
  return db.project.create({ data: { id: newId('prj'), ...input } });
}

export async function listProjects(db: RunsDb, accountId: string, query: PageQuery): Promise<ListEnvelope<ProjectRow>> {
  const range = keysetRange(query);
  const rows = await db.project.findMany({
    where: { accountId, deletedAt: null, ...(range.cursor ? { id: range.cursor } : {}) },
    orderBy: { id: range.order },
    take: range.take,
  });
  return toPage(rows, query, (row) => row.id);
}

/** The account's live project, or 404. */
export async function findProject(
  db: Pick<RunsDb, 'project'>,
  accountId: string,
  projectId: string,
): Promise<ProjectRow> {
  const row = await db.project.findFirst({ where: { id: projectId, accountId, deletedAt: null } });
  if (!row) throw projectNotFound();
  return row;
}

export async function updateProject(
  db: RunsDb,
  accountId: string,
  projectId: string,
  changes: { name?: string; instructions?: string | null; defaultModel?: string | null },
): Promise<ProjectRow> {
  const { count } = await db.project.updateMany({
    where: { id: projectId, accountId, deletedAt: null },
    data: changes,
  });
  if (count === 0) throw projectNotFound();
  return findProject(db, accountId, projectId);
}

/**
 * Deletes a project (kept as a tombstone so its runs stay readable). A project with a queued or running run
 * is refused: cancel the run first.
 */
export async function deleteProject(db: RunsDb, accountId: string, projectId: string, now: Date): Promise<void> {
  await db.$transaction(async (tx) => {
    await findProject(tx, accountId, projectId);
    const active = await tx.run.count({ where: { projectId, status: { in: ['queued', 'running'] } } });
    if (active > 0)
      throw new ApiError('conflict', 'The project has a queued or running run; cancel it first.', {
        param: 'project_id',
      });
    await tx.project.update({ where: { id: projectId }, data: { deletedAt: now } });
  });
}
