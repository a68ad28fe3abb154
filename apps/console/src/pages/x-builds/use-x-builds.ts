import { useApiMutation, useApiQuery } from '../../api/queries';
import {
  blockXBuildAuthor,
  cancelXBuild,
  createXBuild,
  getXBuild,
  getXBuildQueue,
  getXBuildStats,
  listXBuildBlocks,
  listXBuilds,
  moveXBuild,
  pinXBuild,
  redraftXBuildReply,
  requeueXBuild,
  resumeXBuild,
  takeDownXBuild,
  unblockXBuildAuthor,
  unpinXBuild,
  updateXBuildQueue,
} from '../../api/routes';
import { useSession } from '../../api/session';

// The board and the job page follow builds as they move: read again every few seconds.
const LIVE_REFRESH_MS = 2_000;
const BUILDS = () => ['/v1/x-builds'];

/** Only an operator is shown the operator controls; the API refuses them to anyone else all the same. */
export const useIsOperator = () => useSession().data?.operator === true;

export const useXBuilds = () =>
  useApiQuery(listXBuilds, { query: { platform: 'all', limit: 100 } }, { refetchInterval: LIVE_REFRESH_MS });
const SETTLED: readonly string[] = ['done', 'refused', 'failed', 'cancelled'];
export const useXBuild = (id: string) =>
  useApiQuery(
    getXBuild,
    { params: { id } },
    { refetchInterval: (query) => (SETTLED.includes(query.state.data?.status ?? '') ? false : LIVE_REFRESH_MS) },
  );
export const useXBuildStats = (window: string) =>
  useApiQuery(getXBuildStats, { query: { window } }, { refetchInterval: LIVE_REFRESH_MS * 5 });
export const useXBuildQueue = () => useApiQuery(getXBuildQueue, {}, { refetchInterval: LIVE_REFRESH_MS });
export const useXBuildBlocks = () => useApiQuery(listXBuildBlocks, {});

export const useQueueBuild = () =>
  useApiMutation(createXBuild, {
    input: (prompt: string) => ({ body: { source: { type: 'api' as const, prompt } } }),
    invalidates: BUILDS,
  });
export const useUpdateQueue = () =>
  useApiMutation(updateXBuildQueue, {
    input: (body: { paused?: boolean; max_concurrent?: number; max_queue?: number }) => ({ body }),
    invalidates: BUILDS,
  });
export const useBlockAuthor = () =>
  useApiMutation(blockXBuildAuthor, {
    input: (authorId: string) => ({ params: { author_id: authorId }, body: {} }),
    invalidates: BUILDS,
  });
export const useUnblockAuthor = () =>
  useApiMutation(unblockXBuildAuthor, {
    input: (authorId: string) => ({ params: { author_id: authorId } }),
    invalidates: BUILDS,
  });

// These routes take no body, but their specs (built by one helper for every job action) type one as `unknown`.
const byId = (id: string) => ({ params: { id }, body: undefined });
export const useCancelBuild = () => useApiMutation(cancelXBuild, { input: byId, invalidates: BUILDS });
export const usePinBuild = () => useApiMutation(pinXBuild, { input: byId, invalidates: BUILDS });
export const useUnpinBuild = () => useApiMutation(unpinXBuild, { input: byId, invalidates: BUILDS });
export const useRequeueBuild = () => useApiMutation(requeueXBuild, { input: byId, invalidates: BUILDS });
export const useResumeBuild = () => useApiMutation(resumeXBuild, { input: byId, invalidates: BUILDS });
export const useTakeDownBuild = () => useApiMutation(takeDownXBuild, { input: byId, invalidates: BUILDS });
export const useMoveBuild = () =>
  useApiMutation(moveXBuild, {
    input: ({ id, place, other }: { id: string; place: 'before_id' | 'after_id'; other: string }) => ({
      params: { id },
      body: { [place]: other },
    }),
    invalidates: BUILDS,
  });
export const useRedraftReply = () =>
  useApiMutation(redraftXBuildReply, {
    input: ({ id, text }: { id: string; text?: string }) => ({ params: { id }, body: text ? { text } : {} }),
    invalidates: BUILDS,
  });
