import { useState, type FormEvent } from 'react';
import type { XBuildBlock, XBuildQueue } from '../../api/types';
import { dateTime } from '../../ui/format';
import { Section } from '../../ui/page';
import { ErrorState, QueryView } from '../../ui/states';
import { Table } from '../../ui/table';
import { useBlockAuthor, useUnblockAuthor, useUpdateQueue, useXBuildBlocks, useXBuildQueue } from './use-x-builds';

function QueueSettings({ queue }: { queue: XBuildQueue }) {
  const update = useUpdateQueue();
  const [maxConcurrent, setMaxConcurrent] = useState(String(queue.max_concurrent));
  const [maxQueue, setMaxQueue] = useState(String(queue.max_queue));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    update.mutate({ max_concurrent: Number(maxConcurrent), max_queue: Number(maxQueue) });
  };
  return (
    <>
      <p>
        Intake is <strong>{queue.paused ? `paused (${queue.paused_reason ?? 'operator'})` : 'open'}</strong>;{' '}
        {queue.queued} queued, {queue.running} running, {queue.effective_concurrency ?? queue.max_concurrent} at a time
        now.
      </p>
      <div className="actions">
        <button
          type="button"
          className={queue.paused ? undefined : 'danger'}
          disabled={update.isPending}
          onClick={() => update.mutate({ paused: !queue.paused })}
        >
          {queue.paused ? 'Resume intake' : 'Pause intake'}
        </button>
      </div>
      <form onSubmit={submit} aria-label="Queue limits" className="row">
        <label>
          Max concurrent
          <input
            type="number"
            required
            min={1}
            max={1_000}
            value={maxConcurrent}
            onChange={(e) => setMaxConcurrent(e.target.value)}
          />
        </label>
        <label>
          Max queue
          <input
            type="number"
            required
            min={0}
            max={1_000_000}
            value={maxQueue}
            onChange={(e) => setMaxQueue(e.target.value)}
          />
        </label>
        <button type="submit" disabled={update.isPending}>
          Save limits
        </button>
      </form>
      {update.error && <ErrorState error={update.error} />}
    </>
  );
}

function Blocklist() {
  const blocks = useXBuildBlocks();
  const block = useBlockAuthor();
  const unblock = useUnblockAuthor();
  const [author, setAuthor] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    block.mutate(author.trim(), { onSuccess: () => setAuthor('') });
  };
  return (
    <>
      <QueryView
        query={blocks}
        what="the blocklist"
        empty={(list) => list.data.length === 0}
        emptyMessage={<p>No author is blocked.</p>}
      >
        {(list) => (
          <Table<XBuildBlock>
            caption="Blocked authors"
            rows={list.data}
            rowKey={(one) => one.author_id}
            columns={[
              { header: 'Author', cell: (one) => one.author_id },
              { header: 'Reason', cell: (one) => one.reason },
              { header: 'Since', cell: (one) => dateTime(one.created_at) },
              {
                header: 'Actions',
                cell: (one) => (
                  <button
                    type="button"
                    aria-label={`Unblock ${one.author_id}`}
                    disabled={unblock.isPending}
                    onClick={() => unblock.mutate(one.author_id)}
                  >
                    Unblock
                  </button>
                ),
              },
            ]}
          />
        )}
      </QueryView>
      <form onSubmit={submit} aria-label="Block an author" className="row">
        <label>
          Author id <span className="hint">(X user id, or account id for API prompts)</span>
          <input required maxLength={64} value={author} onChange={(e) => setAuthor(e.target.value)} />
        </label>
        <button type="submit" disabled={block.isPending || !author.trim()}>
          Block author
        </button>
      </form>
      {(block.error ?? unblock.error) && <ErrorState error={block.error ?? unblock.error} />}
    </>
  );
}

/** The queue's kill switch and limits, and the blocklist: shown to operators only. */
export function OperatorControls() {
  const queue = useXBuildQueue();
  return (
    <>
      <Section title="Queue">
        <QueryView query={queue} what="the queue">
          {(loaded) => <QueueSettings queue={loaded} />}
        </QueryView>
      </Section>
      <Section title="Blocklist">
        <Blocklist />
      </Section>
    </>
  );
}
