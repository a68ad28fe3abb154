import { newId } from '@sbc/ids';
import type { CallerKey } from '@sbc/proto/sbc/account/v1/account_pb';

/**
 * A batch line's id as the runs service makes it (apps/runs/src/store/batches.ts): its batch's kind and ULID, then
 * the line's number (a batch holds at most 100,000 lines). Anchored and bounded, so at most 46 characters.
 */
const LINE_ID = /^(batch|msgbatch)_req_([0-9A-HJKMNP-TV-Z]{26})_([1-9][0-9]{0,5})$/;

/**
 * The usage event id a call asks for: its request id, when its key is one the runs service minted for a batch
 * (CallerKey.batch_id) and the request id is a line of that very batch. For any other key, and for another batch's
 * line, none: the edge makes the event id, since a caller that chose it could send many calls under one id and be
 * billed for the first only.
 */
export function lineEventIdOf(key: Pick<CallerKey, 'batchId'> | undefined, requestId: string): string | undefined {
  if (!key?.batchId) return undefined;
  const line = LINE_ID.exec(requestId);
  return line && `${line[1]}_${line[2]}` === key.batchId ? requestId : undefined;
}

/**
 * The id of a call's usage event: its line's id when a batch line's call was answered (2xx), else a fresh one. The
 * lane settles a line on its answer, so an answered line is called again only when the lane died between the two,
 * and the ledger applies that second event once (it keys rows by event id, first write wins). Every other outcome
 * keeps an id of its own: a 429 or 5xx the lane tries again, or a 499 cut short by the lane's death, is a row of its
 * own and never takes the place of the answer that follows it.
 */
export function usageEventIdOf(lineEventId: string | undefined, status: number): string {
  return lineEventId !== undefined && status >= 200 && status < 300 ? lineEventId : newId('evt');
}

/**
 * The usage event id of round `round` of a batch line's call that runs MCP tools, other than its last round (whose
 * event takes the line's id itself): made from the line's id, so a line called again after a crash has each earlier
 * round applied once too. Never a line's id (those end in their line number) nor one the edge makes (`evt_…`).
 */
export function roundEventIdOf(lineEventId: string, round: number): string {
  return `${lineEventId}_r${round}`;
}

/** The usage event id of the `index`-th tool call (from 0) the model made in round `round` of a batch line's call. */
export function toolCallEventIdOf(lineEventId: string, round: number, index: number): string {
  return `${roundEventIdOf(lineEventId, round)}_t${index}`;
}
