// The playground's model calls: the same-origin session calls a model route like any caller (billed, limited,
// in the request log), asking the edge to keep the upstream side (`x-sbc-capture: 1`, honoured for a session
// only). Unlike `call` (client.ts), the answer may be a stream, and a refusal comes in the dialect's error body.

/** A model call's answer: what its headers say, and its body whole or as a stream of events. */
export interface ModelCallAnswer {
  status: number;
  requestId: string | undefined;
  /** What the caller sent that the upstream's dialect could not carry (`x-sbc-dropped-fields`). */
  droppedFields: string[];
  servedBy: string | undefined;
  /** The JSON body (not streamed, or a refusal), or undefined when `events` carries the stream. */
  json?: unknown;
  events?: AsyncIterable<unknown>;
}

/** Sends one model call from the console's session, with the capture asked for. */
export async function sendModelCall(
  /** One of api/routes.ts's model routes (its path checked against the spec there). */
  route: { readonly path: string },
  body: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<ModelCallAnswer> {
  const response = await fetch(route.path, {
    method: 'POST',
    credentials: 'same-origin',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'x-sbc-capture': '1',
    },
    body: JSON.stringify(body),
    signal,
  });
  const dropped = response.headers.get('x-sbc-dropped-fields');
  const answer: ModelCallAnswer = {
    status: response.status,
    requestId: response.headers.get('x-request-id') ?? undefined,
    droppedFields: dropped ? dropped.split(',').filter(Boolean) : [],
    servedBy: response.headers.get('x-sbc-served-by') ?? undefined,
  };
  const isStream = (response.headers.get('content-type') ?? '').startsWith('text/event-stream');
  if (isStream && response.body) answer.events = sseData(response.body);
  else answer.json = await response.json().catch(() => ({ error: { message: `HTTP ${response.status}` } }));
  return answer;
}

/** The JSON of each server-sent event's `data:` lines, in order (`[DONE]` and comments skipped). */
async function* sseData(stream: ReadableStream<Uint8Array>): AsyncIterable<unknown> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  for (;;) {
    const { done, value } = await reader.read();
    buffered += decoder.decode(value, { stream: !done }).replace(/\r\n/g, '\n');
    let end: number;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const event = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const data = event
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).replace(/^ /, ''))
        .join('\n');
      if (data && data !== '[DONE]') yield JSON.parse(data) as unknown;
    }
    if (done) return;
  }
}
