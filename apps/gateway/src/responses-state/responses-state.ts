import { dialectId, type ResponsesFields, type SseFrame } from '@sbc/dialects';
import { ApiError } from '@sbc/errors';
import type { Logger } from '@sbc/logging';
import type { ResponsesService } from '@sbc/proto/sbc/runs/v1/responses_pb';
import type { RpcClientOf } from '@sbc/rpc';
import type { Principal } from '../auth/authenticator';
import { bodyOf, type CallerCall, type ReplyTap } from '../model-calls/plan';
import { checkDistinctIds, contextOf, inputItemsOf, prependContext, type Item } from './conversation';

/**
 * Stored OpenAI Responses on the call path (CONTRACTS "Agents, tools and policies"). Two hooks, each a step of
 * the call: before its targets, `expand` reads the response `previous_response_id` names (one read, only then)
 * and puts its context before the call's own turns in the neutral request, whatever the target's dialect; after
 * the reply, `keep` stores the response the caller received (one write, only with `store`), before the reply's
 * last bytes, so a `GET /v1/responses/{id}` on any edge finds it once the caller has it. A call that neither
 * keeps nor continues a response (chat, messages, `store: false`) never reaches this module's I/O.
 *
 * A failed write never costs the caller its reply (already paid for): the reply goes out whole, the failure is
 * logged and counted (`sbc_stored_responses_total{outcome="failed"}`), and reading the response back is a 404,
 * which clients already handle by sending the whole conversation again.
 */

export interface ResponsesStateDeps {
  /** The runs service's stored responses. */
  client: RpcClientOf<typeof ResponsesService>;
  logger: Logger;
  /** The largest response kept: its object and its context, as JSON bytes (RESPONSES_MAX_STORED_BYTES). */
  maxStoredBytes: number;
  /** Told how each write went. */
  onStored(outcome: 'stored' | 'failed'): void;
}

/** The stream events that end a Responses stream with its final `response` object. */
const TERMINAL_EVENTS: ReadonlySet<string> = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/** Whose responses a caller reads and writes: a team key's team, else the caller's own account. */
export function ownerOf(principal: Principal): string {
  return principal.key?.orgId || principal.userId;
}

function tooLarge(bytes: number, max: number, param: string): ApiError {
  const message =
    `The response would be stored with ${bytes} bytes of context; a stored response holds at most ${max}. ` +
    'Send store: false, with the whole conversation in input, to go on.';
  return ApiError.invalid([{ path: param, code: 'too_big', message }]);
}

/** The stored-Responses part of one call that keeps its response or continues one. */
export class ResponseCall implements ReplyTap {
  /** The context to store with the response, as JSON; set once the call is known to keep its response. */
  private itemsJson?: string;
  /** The reply as sent: a whole body, or the data of a stream's terminal event. */
  private sentBody?: unknown;
  private terminal?: string;

  constructor(
    private readonly deps: ResponsesStateDeps,
    private readonly ownerId: string,
    private readonly call: CallerCall,
    private readonly fields: ResponsesFields,
    private readonly requestId: string,
  ) {}

  /**
   * Before the targets: the continued response's context goes before the call's own turns; a response to keep is
   * given its id (the reply carries it) and the reply is tapped. Resolves with the bytes the context added to the
   * prompt (what admission bounds a prompt by).
   */
  async expand(): Promise<number> {
    const { fields, call } = this;
    let context: Item[] = [];
    let addedBytes = 0;
    if (fields.previousResponseId !== undefined) {
      const previous = await this.readPrevious(fields.previousResponseId);
      context = contextOf(JSON.parse(previous.inputItemsJson) as Item[], JSON.parse(previous.responseJson) as Item);
      prependContext(call.request!, context);
      addedBytes = previous.inputItemsJson.length + previous.responseJson.length;
    }
    const items = [...context, ...inputItemsOf(bodyOf(call).input)];
    checkDistinctIds(items, context.length);
    if (!fields.store) return addedBytes;
    const json = JSON.stringify(items);
    const bytes = Buffer.byteLength(json);
    if (bytes > this.deps.maxStoredBytes)
      throw tooLarge(bytes, this.deps.maxStoredBytes, context.length > 0 ? 'previous_response_id' : 'input');
    this.itemsJson = json;
    fields.id = dialectId('resp_');
    call.replyTap = this;
    return addedBytes;
  }

  body(body: unknown): void {
    this.sentBody = body;
  }

  frame(frame: SseFrame): void {
    if (frame.event !== undefined && TERMINAL_EVENTS.has(frame.event)) this.terminal = frame.data;
  }

  /** After the reply, before its last bytes: stores the response the caller received. Never throws. */
  async keep(): Promise<void> {
    const id = this.fields.id;
    const responseJson = this.responseJson();
    if (id === undefined || this.itemsJson === undefined || responseJson === undefined) return;
    const bytes = Buffer.byteLength(responseJson) + Buffer.byteLength(this.itemsJson);
    try {
      if (bytes > this.deps.maxStoredBytes) throw tooLarge(bytes, this.deps.maxStoredBytes, 'output');
      await this.deps.client.storeResponse(
        { ownerId: this.ownerId, responseId: id, responseJson, inputItemsJson: this.itemsJson },
        { requestId: this.requestId },
      );
      this.deps.onStored('stored');
    } catch (error) {
      this.deps.onStored('failed');
      this.deps.logger.warn(
        { requestId: this.requestId, responseId: id, err: error },
        'storing a response failed: its caller has the reply, but it cannot be read back or continued',
      );
    }
  }

  private responseJson(): string | undefined {
    if (this.sentBody !== undefined) return JSON.stringify(this.sentBody);
    if (this.terminal === undefined) return undefined;
    const response = (JSON.parse(this.terminal) as { response?: unknown }).response;
    return response === undefined ? undefined : JSON.stringify(response);
  }

  private async readPrevious(id: string): Promise<{ responseJson: string; inputItemsJson: string }> {
    try {
      const found = await this.deps.client.getResponse(
        { ownerId: this.ownerId, responseId: id, withInputItems: true },
        { requestId: this.requestId },
      );
      return { responseJson: found.responseJson, inputItemsJson: found.inputItemsJson ?? '[]' };
    } catch (error) {
      if (error instanceof ApiError && error.code === 'not_found') {
        throw new ApiError('previous_response_not_found', `Previous response with id '${id}' not found.`, {
          param: 'previous_response_id',
        });
      }
      throw error;
    }
  }
}

/** A call's record and, for a call that keeps its response, its write, side by side: the reply's end waits for both. */
export function alongsideKept(recorded: Promise<void>, kept: ResponseCall | undefined): Promise<void> {
  return kept ? Promise.all([recorded, kept.keep()]).then(() => undefined) : recorded;
}

export function createResponsesState(deps: ResponsesStateDeps) {
  return {
    /**
     * The call's stored-Responses part, or undefined for a call that neither keeps a response nor continues one
     * (every chat and messages call, and Responses calls with `store: false` and no `previous_response_id`).
     */
    forCall(principal: Principal, call: CallerCall, requestId: string): ResponseCall | undefined {
      const fields = call.request?.responses;
      if (!fields || (!fields.store && fields.previousResponseId === undefined)) return undefined;
      return new ResponseCall(deps, ownerOf(principal), call, fields, requestId);
    },
  };
}

export type ResponsesState = ReturnType<typeof createResponsesState>;
