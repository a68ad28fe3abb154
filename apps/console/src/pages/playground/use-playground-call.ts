import { useCallback, useRef, useState } from 'react';
import { ApiFailure } from '../../api/client';
import { sendModelCall } from '../../api/model-call';
import { useApiQuery } from '../../api/queries';
import { createChatCompletion, createMessage, createResponse, getCallCapture } from '../../api/routes';
import {
  buildRequest,
  foldEvent,
  readReply,
  type PlaygroundDialect,
  type PlaygroundPrompt,
  type ReplySoFar,
} from './dialects';

const ROUTES = { chat: createChatCompletion, responses: createResponse, messages: createMessage } as const;

export interface PlaygroundCall {
  dialect: PlaygroundDialect;
  model: string;
  running: boolean;
  reply: ReplySoFar;
  status?: number;
  requestId?: string;
  droppedFields: string[];
  servedBy?: string;
  /** Ms from sending to the first text or tool call, and to the end of the reply, as this browser saw them. */
  firstTokenMs?: number;
  totalMs?: number;
}

// The capture is kept before the reply's last bytes; a call the upstream refused is kept just after its
// answer, so a 404 is asked again a few times, briefly.
const CAPTURE_TRIES = 5;
const isNotFound = (error: unknown) => error instanceof ApiFailure && error.status === 404;

/**
 * One playground call at a time: sends it in its dialect (streamed or not), folds the reply as it arrives,
 * then reads what the upstream received and sent (the call's capture). A new send aborts the one running.
 */
export function usePlaygroundCall() {
  const [call, setCall] = useState<PlaygroundCall>();
  const running = useRef<AbortController | undefined>(undefined);

  const send = useCallback(async (dialect: PlaygroundDialect, prompt: PlaygroundPrompt) => {
    running.current?.abort();
    const abort = new AbortController();
    running.current = abort;
    const startedAt = performance.now();
    let current: PlaygroundCall = {
      dialect,
      model: prompt.model,
      running: true,
      reply: { text: '', toolCalls: [] },
      droppedFields: [],
    };
    const show = (patch: Partial<PlaygroundCall>) => {
      current = { ...current, ...patch };
      if (!abort.signal.aborted) setCall(current);
    };
    show({});
    try {
      const answer = await sendModelCall(ROUTES[dialect], buildRequest(dialect, prompt), abort.signal);
      show({
        status: answer.status,
        requestId: answer.requestId,
        droppedFields: answer.droppedFields,
        servedBy: answer.servedBy,
      });
      if (answer.events) {
        for await (const event of answer.events) {
          const reply = foldEvent(dialect, current.reply, event);
          if (reply === current.reply) continue;
          const first = current.firstTokenMs ?? Math.round(performance.now() - startedAt);
          show({ reply, firstTokenMs: first });
        }
      } else {
        show({ reply: readReply(dialect, answer.json), firstTokenMs: Math.round(performance.now() - startedAt) });
      }
      show({ running: false, totalMs: Math.round(performance.now() - startedAt) });
    } catch (error) {
      if (abort.signal.aborted) return;
      const message = error instanceof Error ? error.message : 'The call could not be made.';
      show({ running: false, reply: { ...current.reply, error: `The call broke off: ${message}` } });
    }
  }, []);

  const capture = useApiQuery(
    getCallCapture,
    { params: { request_id: call?.requestId ?? 'none' } },
    {
      enabled: !!call?.requestId && !call.running,
      retry: (failures, error) => failures < CAPTURE_TRIES && isNotFound(error),
      retryDelay: 300,
    },
  );
  return { call, send, capture };
}
