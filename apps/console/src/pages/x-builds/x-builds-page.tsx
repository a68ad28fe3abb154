import { useState, type FormEvent } from 'react';
import type { XBuild, XBuildStats } from '../../api/types';
import { Link, useLocation } from '../../router/router';
import { count } from '../../ui/format';
import { Page, Section } from '../../ui/page';
import { ErrorState, QueryView } from '../../ui/states';
import { Table } from '../../ui/table';
import { boardOf, etaSeconds, seconds } from './board';
import { JobPage } from './job-page';
import { OperatorControls } from './operator-controls';
import { useIsOperator, useQueueBuild, useXBuilds, useXBuildStats } from './use-x-builds';

const titleOf = (job: XBuild) =>
  (job.source?.type === 'api' ? (job.source.title ?? job.source.prompt) : job.prompt) ?? job.id;

function JobCard({ job, stats }: { job: XBuild; stats: XBuildStats | undefined }) {
  const concurrency = stats?.queue?.effective_concurrency ?? stats?.queue?.max_concurrent ?? 1;
  const eta = etaSeconds(job, { concurrency, medianBuildS: stats?.total_s?.p50 }, Date.now());
  const title = titleOf(job);
  return (
    <li className="card">
      <Link to={`x-builds?job=${encodeURIComponent(job.id)}`} className="breakable">
        {title.length > 80 ? `${title.slice(0, 80)}…` : title}
      </Link>
      <dl className="facts">
        <dt>Status</dt>
        <dd>{job.status}</dd>
        <dt>Lane</dt>
        <dd>{job.lane === 'x' ? 'X post' : 'API'}</dd>
        {job.position ? (
          <>
            <dt>Position</dt>
            <dd>
              {job.position}
              {job.pinned ? ' (pinned)' : ''}
            </dd>
          </>
        ) : null}
        {eta !== undefined && (
          <>
            <dt>ETA</dt>
            <dd>about {seconds(eta)}</dd>
          </>
        )}
        <dt>Stages</dt>
        <dd>
          {job.stages && job.stages.length > 0
            ? job.stages.map((stage) => `${stage.name} ${seconds(stage.seconds)}`).join(', ')
            : 'None yet'}
        </dd>
      </dl>
    </li>
  );
}

function Board({ stats }: { stats: XBuildStats | undefined }) {
  const jobs = useXBuilds();
  return (
    <QueryView
      query={jobs}
      what="the builds"
      empty={(page) => page.data.length === 0}
      emptyMessage={<p>No builds yet. Queue one above, or tag the service&apos;s X account in a post.</p>}
    >
      {(page) => (
        <div className="board">
          {boardOf(page.data).map((column) => (
            <section key={column.title} aria-label={`${column.title} builds`} className="board-column">
              <h3>
                {column.title} ({column.jobs.length})
              </h3>
              <ul>
                {column.jobs.map((job) => (
                  <JobCard key={job.id} job={job} stats={stats} />
                ))}
              </ul>
            </section>
          ))}
        </div>
      )}
    </QueryView>
  );
}

const WINDOWS = { '1h': 'Last hour', '24h': 'Last 24 hours', '168h': 'Last 7 days' } as const;

function Stats({
  stats,
  window,
  setWindow,
}: {
  stats: ReturnType<typeof useXBuildStats>;
  window: string;
  setWindow: (w: string) => void;
}) {
  return (
    <>
      <div className="row">
        <label>
          Window
          <select value={window} onChange={(e) => setWindow(e.target.value)}>
            {Object.entries(WINDOWS).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
      </div>
      <QueryView query={stats} what="the statistics">
        {(loaded) => {
          const stages = Object.entries(loaded.stages ?? {}).map(([name, figures]) => ({ name, ...figures }));
          const rows = [
            ...(loaded.total_s ? [{ name: 'Total', ...loaded.total_s }] : []),
            ...(loaded.queue_wait_s ? [{ name: 'Queue wait', ...loaded.queue_wait_s }] : []),
            ...stages,
          ];
          return (
            <>
              <dl className="tiles">
                <div>
                  <dt>Accepted</dt>
                  <dd>{count(loaded.accepted)}</dd>
                </div>
                {Object.entries(loaded.by_status ?? {}).map(([status, n]) => (
                  <div key={status}>
                    <dt>{status}</dt>
                    <dd>{count(n)}</dd>
                  </div>
                ))}
                <div>
                  <dt>SLO misses{loaded.slo ? ` (over ${seconds(loaded.slo.total_s)})` : ''}</dt>
                  <dd>{loaded.slo ? count(loaded.slo.misses) : '—'}</dd>
                </div>
              </dl>
              {rows.length > 0 && (
                <Table<(typeof rows)[number]>
                  caption="Time per stage"
                  rows={rows}
                  rowKey={(row) => row.name}
                  columns={[
                    { header: 'Stage', cell: (row) => row.name },
                    { header: 'Jobs', cell: (row) => count(row.count), numeric: true },
                    { header: 'p50', cell: (row) => seconds(row.p50), numeric: true },
                    { header: 'p90', cell: (row) => seconds(row.p90), numeric: true },
                  ]}
                />
              )}
            </>
          );
        }}
      </QueryView>
    </>
  );
}

function QueueBuild() {
  const queue = useQueueBuild();
  const [prompt, setPrompt] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    queue.mutate(prompt, { onSuccess: () => setPrompt('') });
  };
  return (
    <form onSubmit={submit} aria-label="Queue a build" className="row">
      <label>
        What to build
        <input required maxLength={8_000} value={prompt} onChange={(e) => setPrompt(e.target.value)} />
      </label>
      <button type="submit" disabled={queue.isPending || !prompt.trim()}>
        Queue build
      </button>
      {queue.error && <ErrorState error={queue.error} />}
    </form>
  );
}

/** X builds: a live board by status, the lane's statistics, and for operators the queue's controls. */
export function XBuildsPage() {
  const open = useLocation().query.get('job');
  const [window, setWindow] = useState('24h');
  const stats = useXBuildStats(window);
  const operator = useIsOperator();
  if (open) return <JobPage key={open} id={open} operator={operator} />;
  return (
    <Page title="X builds">
      <p>
        Apps built from a post that tags the service&apos;s X account, or from a prompt. The board refreshes by itself.
      </p>
      <Section title="Board">
        <QueueBuild />
        <Board stats={stats.data} />
      </Section>
      <Section title="Statistics">
        <Stats stats={stats} window={window} setWindow={setWindow} />
      </Section>
      {operator && <OperatorControls />}
    </Page>
  );
}
