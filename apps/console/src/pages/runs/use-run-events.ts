import { useEffect, useRef, useState } from 'react';
import { withQuery } from '../../api/client';
import { useRefreshUnder } from '../../api/queries';
import { fillPath } from '../../api/route';
import { runEvents } from '../../api/routes';
import type { RunEvent } from '../../api/types';
import { SETTLING_EVENT_TYPES, SHOWN_EVENT_TYPES, withEvent } from './run-events';

export type StreamState = 'connecting' | 'live' | 'reconnecting' | 'ended';

// How long to wait before opening a new stream once the browser has given up on one.
const REOPEN_AFTER_MS = 2_000;

/**
 * A run's events, live. EventSource reconnects by itself after a drop, sending `Last-Event-ID` so the stream
 * resumes after the last event it delivered; when the browser gives up instead (the edge refused or could not be
 * reached), a new stream is opened with `?after=` the last event held. Either way an event already held is
 * dropped, so the list has no gap and no repeat. Going offline closes the stream at once and coming back online
 * opens it again the same way. The stream ends with the run's settling event.
 */
export function useRunEvents(runId: string): { events: readonly RunEvent[]; state: StreamState } {
  const [events, setEvents] = useState<readonly RunEvent[]>([]);
  const [state, setState] = useState<StreamState>('connecting');
  const lastSeq = useRef(0);
  const refreshUnder = useRefreshUnder();

  useEffect(() => {
    lastSeq.current = 0;
    setEvents([]);
    setState('connecting');
    let source: EventSource | undefined;
    let reopen: ReturnType<typeof setTimeout> | undefined;
    let finished = false;

    const receive = (message: MessageEvent<string>) => {
      const event = JSON.parse(message.data) as RunEvent;
      if (event.seq <= lastSeq.current) return;
      lastSeq.current = event.seq;
      setEvents((held) => withEvent(held, event));
      if ((SETTLING_EVENT_TYPES as readonly string[]).includes(event.type)) {
        // The server ends the stream after this event; closing first keeps EventSource from reconnecting.
        finished = true;
        source?.close();
        setState('ended');
      }
      // The run's status, output and usage changed with this event.
      if (event.type.startsWith('run.')) void refreshUnder(`/v1/runs/${runId}`, '/v1/runs');
    };

    const open = () => {
      const path = fillPath(runEvents.path, { run_id: runId });
      source = new EventSource(withQuery(path, lastSeq.current > 0 ? { after: lastSeq.current } : {}));
      source.onopen = () => setState('live');
      source.onerror = () => {
        if (finished) return;
        setState('reconnecting');
        if (source?.readyState === EventSource.CLOSED) reopen = setTimeout(open, REOPEN_AFTER_MS);
      };
      for (const type of SHOWN_EVENT_TYPES) source.addEventListener(type, receive);
    };
    // A connection open when the device loses its network can hang without an error for minutes: drop it at
    // once, and follow again from the last event held as soon as the network is back.
    const offline = () => {
      if (finished) return;
      source?.close();
      clearTimeout(reopen);
      setState('reconnecting');
    };
    const online = () => {
      if (finished || source?.readyState !== EventSource.CLOSED) return;
      clearTimeout(reopen);
      open();
    };
    window.addEventListener('offline', offline);
    window.addEventListener('online', online);
    open();
    return () => {
      finished = true;
      source?.close();
      clearTimeout(reopen);
      window.removeEventListener('offline', offline);
      window.removeEventListener('online', online);
    };
  }, [runId, refreshUnder]);

  return { events, state };
}
