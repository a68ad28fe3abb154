import { dialectId, type SseFrame } from '@sbc/dialects';
import { ApiError } from '@sbc/errors';
import type { Logger } from '@sbc/logging';
import type { ResponsesService } from '@sbc/proto/sbc/runs/v1/responses_pb';
import type { RpcClientOf } from '@sbc/rpc';
import type { Principal } from '../auth/authenticator';
import {
  neutralRequestOf,
  rewriteRequest,
  type CallHook,
  type HookedCall,
  type HookPart,
  type SentWatcher,
} from '../model-calls/call-hooks';
import { bodyOf } from '../model-calls/plan';
import { checkDistinctIds, contextOf, inputItemsOf, prependContext, type Item } from './conversation';

/**
 * Stored OpenAI Responses, a hook on the call path's socket (CONTRACTS "Agents, tools and policies";
 * model-calls/call-hooks.ts). Before the first target, `before` reads the response `previous_response_id` names
 * (one read, only then) and puts its context before the call's own turns in the neutral request, whatever the
 * target's dialect; after the reply, `record` stores the response as the caller received it (one write, only with
 * `store`), beside the usage event and before the reply's last bytes, so `GET /v1/responses/{id}` on any edge
 * finds it once the caller has it. A call that neither keeps nor continues a response (chat, messages,
 * `store: false`) takes no part: it pays one property read.
 *
 * A failed write never costs the caller its reply (already paid for): the reply goes out whole, the failure is
 * logged and counted (`sbc_stored_responses_total{outcome="failed"}`), and the response is not found later (a 404,
 * or a 503 while the runs service is down), which clients handle by sending the whole conversation again.
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
class ResponseCall implements HookPart, SentWatcher {
  /** The id the kept response is given; set once the call is known to keep it. */
  private id?: string;
  /** The context to store with the response, as JSON; set with `id`. */
  private itemsJson?: string;
  /** The reply as sent: a whole body, or the data of a stream's terminal event. */
  private sentBody?: unknown;
  private terminal?: string;
  readonly sent: SentWatcher = this;

  constructor(
    private readonly deps: ResponsesStateDeps,
    private readonly ownerId: string,
    private readonly requestId: string,
  ) {}

  /**
   * The continued response's context goes before the call's own turns (and its bytes into the prompt's); a response
   * to keep is given its id, which its reply carries.
   */
  async before(hooked: HookedCall): Promise<undefined> {
    const { call } = hooked;
    const request = neutralRequestOf(call);
    const fields = request.responses;
    if (!fields) return undefined;
    let context: Item[] = [];
    if (fields.previousResponseId !== undefined) {
      const previous = await this.readPrevious(fields.previousResponseId);
      context = contextOf(JSON.parse(previous.inputItemsJson) as Item[], JSON.parse(previous.responseJson) as Item);
      prependContext(request, context);
      rewriteRequest(call, request);
      // Bytes, not characters: a token is at least a byte, not at least a character.
      hooked.bytes += Buffer.byteLength(previous.inputItemsJson) + Buffer.byteLength(previous.responseJson);
    }
    const items = [...context, ...inputItemsOf(bodyOf(call).input)];
    checkDistinctIds(items, context.length);
    if (!fields.store) return undefined;
    const json = JSON.stringify(items);
    const bytes = Buffer.byteLength(json);
    if (bytes > this.deps.maxStoredBytes)
      throw tooLarge(bytes, this.deps.maxStoredBytes, context.length > 0 ? 'previous_response_id' : 'input');
    this.itemsJson = json;
    this.id = fields.id = dialectId('resp_');
    return undefined;
  }

  body(body: unknown): void {
    this.sentBody = body;
  }

  frames(frames: readonly SseFrame[]): void {
    for (const frame of frames)
      if (frame.event !== undefined && TERMINAL_EVENTS.has(frame.event)) this.terminal = frame.data;
  }

  /** Beside the usage event, before the reply's last bytes: stores the response the caller received. Never throws. */
  async record(): Promise<void> {
    const id = this.id;
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

/**
 * The hook: a part in the calls whose dialect keeps state and whose body asks for it (every chat and messages call,
 * and Responses calls with `store: false` and no `previous_response_id`, take none).
 */
export function createResponsesState(deps: ResponsesStateDeps): CallHook {
  return {
    partIn({ principal, call, out }) {
      if (!call.adapter.asksForState?.(bodyOf(call))) return undefined;
      return new ResponseCall(deps, ownerOf(principal), out.requestId);
    },
  };
}
