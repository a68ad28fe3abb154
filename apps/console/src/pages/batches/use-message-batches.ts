import { keepPreviousData, useMutation } from '@tanstack/react-query';
import { call } from '../../api/client';
import { useApiMutation, useApiQuery } from '../../api/queries';
import { fillPath } from '../../api/route';
import {
  cancelMessageBatch,
  createMessageBatch,
  deleteMessageBatch,
  getMessageBatch,
  getMessageBatchResults,
  listMessageBatches,
} from '../../api/routes';
import type { MessageBatchRequest } from '../../api/types';
import { isProcessing } from './message-batch-view';

const MESSAGE_BATCHES = () => ['/v1/messages/batches'];
const PAGE_SIZE = 20;
// While a batch runs its counts change without the page doing anything: read the list again.
const LIVE_REFRESH_MS = 2_000;

export const useMessageBatches = (afterId: string | undefined) =>
  useApiQuery(
    listMessageBatches,
    { query: { limit: PAGE_SIZE, after_id: afterId } },
    {
      placeholderData: keepPreviousData,
      refetchInterval: (query) => (query.state.data?.data.some(isProcessing) ? LIVE_REFRESH_MS : false),
    },
  );

/** Sends the requests as Anthropic's create body; the API checks each and refuses naming the first bad one. */
export const useCreateMessageBatch = () =>
  useApiMutation(createMessageBatch, {
    // Each request's fields are the API's to check: the page sends what the person gave, read as JSON.
    input: (requests: object[]) => ({ body: { requests: requests as MessageBatchRequest[] } }),
    invalidates: MESSAGE_BATCHES,
  });

export const useCancelMessageBatch = () =>
  useApiMutation(cancelMessageBatch, {
    input: (batchId: string) => ({ params: { message_batch_id: batchId } }),
    invalidates: MESSAGE_BATCHES,
  });

export const useDeleteMessageBatch = () =>
  useApiMutation(deleteMessageBatch, {
    input: (batchId: string) => ({ params: { message_batch_id: batchId } }),
    invalidates: MESSAGE_BATCHES,
  });

/**
 * Saves an ended batch's results as `<id>-results.jsonl` (the page offers it for ended batches only). The batch is
 * read first, so one deleted meanwhile is a refusal the page shows rather than an error body saved to disk; the
 * results then stream to disk by a plain link.
 */
export const useDownloadMessageBatchResults = () =>
  useMutation({
    mutationFn: async (batchId: string) => {
      const params = { message_batch_id: batchId };
      await call(getMessageBatch, { params });
      const link = document.createElement('a');
      link.href = fillPath(getMessageBatchResults.path, params);
      link.download = `${batchId}-results.jsonl`;
      document.body.append(link);
      link.click();
      link.remove();
    },
  });
