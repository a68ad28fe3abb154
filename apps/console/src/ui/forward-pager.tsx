import { useState } from 'react';

/**
 * Paging for a list the API pages forward only (`after_id`): the cursors walked so far are kept, so going back is
 * dropping the last one. `after` is the cursor of the page to show; `atStart` is the first page.
 */
export function useForwardCursors() {
  const [cursors, setCursors] = useState<string[]>([]);
  return {
    after: cursors.at(-1),
    atStart: cursors.length === 0,
    back: () => setCursors((walked) => walked.slice(0, -1)),
    forward: (lastId: string) => setCursors((walked) => [...walked, lastId]),
  };
}

/** "Newer …" and "Older …" buttons under such a list; `noun` names its rows ("batches"). */
export function ForwardPager({
  cursors,
  page,
  noun,
}: {
  cursors: ReturnType<typeof useForwardCursors>;
  page: { has_more: boolean; last_id?: string | null };
  noun: string;
}) {
  const lastId = page.last_id;
  return (
    <div className="pager">
      <button type="button" disabled={cursors.atStart} onClick={cursors.back}>
        Newer {noun}
      </button>
      <button type="button" disabled={!page.has_more || !lastId} onClick={() => lastId && cursors.forward(lastId)}>
        Older {noun}
      </button>
    </div>
  );
}
