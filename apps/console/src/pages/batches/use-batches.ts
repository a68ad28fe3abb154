import { keepPreviousData, useMutation } from '@tanstack/react-query';
import { call, upload } from '../../api/client';
import { useApiMutation, useApiQuery, useRefreshUnder } from '../../api/queries';
import { fillPath } from '../../api/route';
import {
  cancelBatch,
  createBatch,
  getFile,
  getFileContent,
  listBatches,
  listFiles,
  uploadFile,
} from '../../api/routes';
import type { BatchEndpoint } from '../../api/types';
import { isOpen } from './batch-view';

const BATCHES = () => ['/v1/batches'];
const PAGE_SIZE = 20;
// While a batch runs its counts change without the page doing anything: read the list again.
const LIVE_REFRESH_MS = 2_000;

export const useBatches = (after: string | undefined) =>
  useApiQuery(
    listBatches,
    { query: { limit: PAGE_SIZE, after } },
    {
      placeholderData: keepPreviousData,
      refetchInterval: (query) => (query.state.data?.data.some(isOpen) ? LIVE_REFRESH_MS : false),
    },
  );

/** The uploaded batch input files, newest first: what a batch can be created over. */
export const useBatchFiles = () => useApiQuery(listFiles, { query: { purpose: 'batch', limit: 100 } });

/** Uploads a JSONL file with purpose `batch`; the edge checks it line by line and refuses it naming a bad line. */
export function useUploadBatchFile() {
  const refresh = useRefreshUnder();
  return useMutation({
    mutationFn: (file: File) => {
      const form = new FormData();
      form.append('purpose', 'batch');
      form.append('file', file);
      return upload(uploadFile, form);
    },
    onSuccess: () => refresh('/v1/files'),
  });
}

export const useCreateBatch = () =>
  useApiMutation(createBatch, {
    input: (body: { input_file_id: string; endpoint: BatchEndpoint }) => ({
      body: { ...body, completion_window: '24h' as const },
    }),
    invalidates: BATCHES,
  });

export const useCancelBatch = () =>
  useApiMutation(cancelBatch, {
    input: (batchId: string) => ({ params: { batch_id: batchId } }),
    invalidates: BATCHES,
  });

/**
 * Saves a batch's output or error file. The file is looked up first, so a file that is gone (kept 30 days) is a
 * refusal the page shows rather than an error body saved to disk; the bytes then stream to disk by a plain link.
 */
export const useDownloadFile = () =>
  useMutation({
    mutationFn: async (fileId: string) => {
      const file = await call(getFile, { params: { file_id: fileId } });
      const link = document.createElement('a');
      link.href = fillPath(getFileContent.path, { file_id: fileId });
      link.download = file.filename;
      document.body.append(link);
      link.click();
      link.remove();
    },
  });
