import { useApiMutation, useApiQuery } from '../../api/queries';
import {
  cancelRun,
  createProject,
  createRun,
  createWebhook,
  deleteWebhook,
  getProjectFile,
  getRun,
  listProjectFiles,
  listProjects,
  listRuns,
  listWebhookDeliveries,
  listWebhooks,
  resendWebhookDelivery,
} from '../../api/routes';
import type { Run } from '../../api/types';

const PAGE = { limit: 100 };
// While a run is queued or running its row changes without the page doing anything: read it again.
const LIVE_REFRESH_MS = 2_000;
export const STATUS_NAMES: Record<Run['status'], string> = {
  queued: 'Queued',
  running: 'Running',
  succeeded: 'Succeeded',
  failed: 'Failed',
  cancelled: 'Cancelled',
};
export const isActive = (run: Pick<Run, 'status'>) => run.status === 'queued' || run.status === 'running';

export const useProjects = () => useApiQuery(listProjects, { query: PAGE });
export const useProjectFiles = (projectId: string) =>
  useApiQuery(listProjectFiles, { params: { project_id: projectId }, query: PAGE });
export const useProjectFile = (projectId: string, path: string) =>
  useApiQuery(getProjectFile, { params: { project_id: projectId }, query: { path } });
export const useRuns = () =>
  useApiQuery(
    listRuns,
    { query: PAGE },
    { refetchInterval: (query) => (query.state.data?.data.some(isActive) ? LIVE_REFRESH_MS : false) },
  );
export const useRun = (runId: string) => useApiQuery(getRun, { params: { run_id: runId } });
export const useWebhooks = () => useApiQuery(listWebhooks, { query: PAGE });
export const useDeliveries = (webhookId: string) =>
  useApiQuery(
    listWebhookDeliveries,
    { params: { webhook_id: webhookId }, query: PAGE },
    // Retries of a failed delivery land on their own schedule.
    { refetchInterval: LIVE_REFRESH_MS * 2 },
  );

export const useCreateProject = () =>
  useApiMutation(createProject, {
    input: (body: { name: string; instructions?: string; default_model?: string }) => ({ body }),
    invalidates: () => ['/v1/projects'],
  });
export const useStartRun = () =>
  useApiMutation(createRun, {
    input: (body: { project_id: string; prompt: string; model?: string }) => ({ body }),
    invalidates: () => ['/v1/runs'],
  });
export const useCancelRun = () =>
  useApiMutation(cancelRun, {
    input: (runId: string) => ({ params: { run_id: runId } }),
    invalidates: () => ['/v1/runs'],
  });
export const useAddWebhook = () =>
  useApiMutation(createWebhook, {
    input: (body: { url: string; events?: ('run.succeeded' | 'run.failed' | 'run.cancelled')[] }) => ({ body }),
    invalidates: () => ['/v1/webhooks'],
  });
export const useDeleteWebhook = () =>
  useApiMutation(deleteWebhook, {
    input: (webhookId: string) => ({ params: { webhook_id: webhookId } }),
    invalidates: () => ['/v1/webhooks'],
  });
export const useResendDelivery = () =>
  useApiMutation(resendWebhookDelivery, {
    input: (target: { webhookId: string; deliveryId: string }) => ({
      params: { webhook_id: target.webhookId, delivery_id: target.deliveryId },
    }),
    invalidates: (target) => [`/v1/webhooks/${target.webhookId}/deliveries`],
  });
