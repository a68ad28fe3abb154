import { createParser } from 'eventsource-parser';

/** How fast a runs stack's sim streams (startStack's simTokensPerSecond), so a model call can be caught mid-way. */
export const SIM_TOKENS_PER_SECOND = 100;

export interface SseFrame {
  id?: string;
  event?: string;
  data: string;
}

/**
 * Reads a run's event stream as a client does: frames as they arrive, until the server ends the stream,
 * `until` says stop (the connection is then dropped, like a client going away), or `timeoutMs` passes.
 */
export async function readEventStream(
  url: string,
  options: {
    key: string;
    lastEventId?: string;
    until?: (frame: SseFrame, frames: SseFrame[]) => boolean;
    timeoutMs?: number;
  },
): Promise<{ status: number; frames: SseFrame[]; ended: boolean; contentType: string | null }> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), options.timeoutMs ?? 20_000);
  const frames: SseFrame[] = [];
  let stopped = false;
  try {
    const res = await fetch(url, {
      headers: {
        authorization: `Bearer ${options.key}`,
        accept: 'text/event-stream',
        ...(options.lastEventId ? { 'last-event-id': options.lastEventId } : {}),
      },
      signal: controller.signal,
    });
    if (!res.ok || !res.body)
      return { status: res.status, frames, ended: true, contentType: res.headers.get('content-type') };
    const parser = createParser({
      onEvent(event) {
        if (stopped) return;
        const frame: SseFrame = {
          data: event.data,
          ...(event.id !== undefined ? { id: event.id } : {}),
          ...(event.event ? { event: event.event } : {}),
        };
        frames.push(frame);
        if (options.until?.(frame, frames)) stopped = true;
      },
    });
    const text = new TextDecoder();
    // Leaving the loop early cancels the body, which drops the connection as a client going away does.
    for await (const chunk of res.body) {
      parser.feed(text.decode(chunk, { stream: true }));
      if (stopped) break;
    }
    return { status: res.status, frames, ended: !stopped, contentType: res.headers.get('content-type') };
  } finally {
    clearTimeout(timer);
  }
}
