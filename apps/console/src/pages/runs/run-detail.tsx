import type { Run, RunEvent } from '../../api/types';
import { Link } from '../../router/router';
import { count, dateTime } from '../../ui/format';
import { Page, Section } from '../../ui/page';
import { ErrorState, QueryView } from '../../ui/states';
import { Table } from '../../ui/table';
import { transcriptOf, type TranscriptEntry } from './run-events';
import { useRunEvents, type StreamState } from './use-run-events';
import { isActive, STATUS_NAMES, useCancelRun, useRun } from './use-runs';

const STREAM_STATES: Record<StreamState, string> = {
  connecting: 'Connecting to the event stream…',
  live: 'Live: new events appear as they happen.',
  reconnecting: 'Connection lost; reconnecting where it left off…',
  ended: 'The run has settled; its stream has ended.',
};

function Entry({ entry }: { entry: TranscriptEntry }) {
  switch (entry.kind) {
    case 'message':
      return <p className="breakable">{entry.text}</p>;
    case 'tool.call':
      return (
        <p className="breakable">
          <strong>Tool call {entry.name}</strong> <code>{entry.input}</code>
        </p>
      );
    case 'tool.result':
      return (
        <div>
          <strong>
            Tool result {entry.name}: {entry.ok ? 'ok' : 'failed'}
          </strong>
          <pre className="breakable">{entry.output}</pre>
        </div>
      );
    case 'status':
      return (
        <p className="note">
          {entry.type}
          {entry.detail ? `: ${entry.detail}` : ''}
        </p>
      );
  }
}

function Summary({ run }: { run: Run }) {
  const cancel = useCancelRun();
  return (
    <>
      <dl className="tiles">
        <div>
          <dt>Status</dt>
          <dd>{STATUS_NAMES[run.status]}</dd>
        </div>
        <div>
          <dt>Model</dt>
          <dd>{run.model}</dd>
        </div>
        <div>
          <dt>Steps</dt>
          <dd>{count(run.usage.steps)}</dd>
        </div>
        <div>
          <dt>Tool calls</dt>
          <dd>{count(run.usage.tool_calls)}</dd>
        </div>
        <div>
          <dt>Tokens in / out</dt>
          <dd>
            {count(run.usage.input_tokens)} / {count(run.usage.output_tokens)}
          </dd>
        </div>
        <div>
          <dt>Started</dt>
          <dd>{dateTime(run.started_at ?? run.created_at)}</dd>
        </div>
      </dl>
      <p className="breakable">
        <strong>Prompt:</strong> {run.prompt}
      </p>
      {run.error && (
        <p role="alert" className="state error">
          {run.error.message} ({run.error.code})
        </p>
      )}
      {isActive(run) && (
        <div className="actions">
          <button
            type="button"
            className="danger"
            disabled={cancel.isPending || !!run.cancel_requested_at}
            onClick={() => cancel.mutate(run.id)}
          >
            {run.cancel_requested_at ? 'Cancelling…' : 'Cancel run'}
          </button>
        </div>
      )}
      {cancel.error && <ErrorState error={cancel.error} />}
    </>
  );
}

/** One run: what it is, a cancel while it works, and its events followed live. */
export function RunDetail({ runId }: { runId: string }) {
  const run = useRun(runId);
  const { events, state } = useRunEvents(runId);
  return (
    <Page title="Run" actions={<Link to="runs">All runs</Link>}>
      <QueryView query={run} what="the run">
        {(loaded) => <Summary run={loaded} />}
      </QueryView>
      <Section title="Live events">
        <p role="status" className="note">
          {STREAM_STATES[state]}
        </p>
        {/* Focusable so a keyboard can scroll a transcript longer than its frame. */}
        <div className="stack transcript" role="region" aria-label="Transcript" tabIndex={0}>
          {transcriptOf(events).map((entry) => (
            <Entry key={entry.seq} entry={entry} />
          ))}
        </div>
        {events.length > 0 && (
          <Table<RunEvent>
            caption="Event log"
            rows={[...events]}
            rowKey={(event) => String(event.seq)}
            columns={[
              { header: 'Id', cell: (event) => event.seq, numeric: true },
              { header: 'Type', cell: (event) => event.type },
              { header: 'At', cell: (event) => new Date(event.created_at).toISOString().slice(11, 23) },
            ]}
          />
        )}
      </Section>
    </Page>
  );
}
