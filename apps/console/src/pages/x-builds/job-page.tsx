import { useState, type FormEvent } from 'react';
import { fillPath } from '../../api/route';
import { getXBuildClip, getXBuildScreenshot } from '../../api/routes';
import type { XBuild } from '../../api/types';
import { Link } from '../../router/router';
import { ConfirmDialog } from '../../ui/dialog';
import { dateTime } from '../../ui/format';
import { Page, Section } from '../../ui/page';
import { ErrorState, QueryView } from '../../ui/states';
import { Table } from '../../ui/table';
import { seconds } from './board';
import {
  useCancelBuild,
  useMoveBuild,
  usePinBuild,
  useRedraftReply,
  useRequeueBuild,
  useResumeBuild,
  useTakeDownBuild,
  useUnpinBuild,
  useXBuild,
} from './use-x-builds';

type Stage = NonNullable<XBuild['stages']>[number];
const SETTLED = ['done', 'refused', 'failed', 'cancelled'];

function Media({ job }: { job: XBuild }) {
  const media = job.media ?? [];
  if (media.length === 0) return <p>No screenshot or clip recorded for this build (yet).</p>;
  return (
    <div className="media">
      {media.includes('screenshot') && (
        <figure>
          <img
            src={fillPath(getXBuildScreenshot.path, { id: job.id })}
            alt={`Screenshot of the app built for ${job.slug ?? job.id}, at desktop width`}
            width={640}
            height={400}
          />
          <figcaption>At 1280×800</figcaption>
        </figure>
      )}
      {media.includes('clip') && (
        <figure>
          <video src={fillPath(getXBuildClip.path, { id: job.id })} controls muted width={640} height={400} />
          <figcaption>The first seconds after load</figcaption>
        </figure>
      )}
    </div>
  );
}

/** The operator's controls of one job; the API refuses every one of them to anyone else. */
function OperatorActions({ job }: { job: XBuild }) {
  const pin = usePinBuild();
  const unpin = useUnpinBuild();
  const requeue = useRequeueBuild();
  const resume = useResumeBuild();
  const move = useMoveBuild();
  const takeDown = useTakeDownBuild();
  const redraft = useRedraftReply();
  const [other, setOther] = useState('');
  const [place, setPlace] = useState<'before_id' | 'after_id'>('before_id');
  const [reply, setReply] = useState('');
  const [takingDown, setTakingDown] = useState(false);
  const error = [pin, unpin, requeue, resume, move, redraft].find((one) => one.error)?.error;
  const queued = job.status === 'queued';
  const stopped = job.status === 'failed' || job.status === 'cancelled' || job.status === 'refused';

  return (
    <Section title="Operator controls">
      <div className="actions">
        {queued && !job.pinned && (
          <button type="button" disabled={pin.isPending} onClick={() => pin.mutate(job.id)}>
            Pin to the front
          </button>
        )}
        {queued && job.pinned && (
          <button type="button" disabled={unpin.isPending} onClick={() => unpin.mutate(job.id)}>
            Unpin
          </button>
        )}
        {stopped && (
          <button type="button" disabled={requeue.isPending} onClick={() => requeue.mutate(job.id)}>
            Requeue at the front
          </button>
        )}
        {(job.status === 'failed' || job.status === 'cancelled') && (
          <button type="button" disabled={resume.isPending} onClick={() => resume.mutate(job.id)}>
            Resume at the audit
          </button>
        )}
        {job.app_url && !job.taken_down_at && (
          <button type="button" className="danger" onClick={() => (takeDown.reset(), setTakingDown(true))}>
            Take down the app
          </button>
        )}
      </div>
      {queued && (
        <form
          className="row"
          aria-label="Move in the queue"
          onSubmit={(event: FormEvent) => (
            event.preventDefault(),
            move.mutate({ id: job.id, place, other: other.trim() })
          )}
        >
          <label>
            Place
            <select value={place} onChange={(e) => setPlace(e.target.value as 'before_id' | 'after_id')}>
              <option value="before_id">Right before</option>
              <option value="after_id">Right after</option>
            </select>
          </label>
          <label>
            Queued job id
            <input required value={other} onChange={(e) => setOther(e.target.value)} placeholder="xbj_…" />
          </label>
          <button type="submit" disabled={move.isPending || !other.trim()}>
            Move
          </button>
        </form>
      )}
      {job.status === 'done' && job.reply?.status !== 'posted' && (
        <form
          className="row"
          aria-label="Redraft the reply"
          onSubmit={(event: FormEvent) => (
            event.preventDefault(),
            redraft.mutate({ id: job.id, text: reply.trim() || undefined }, { onSuccess: () => setReply('') })
          )}
        >
          <label>
            New reply text <span className="hint">(empty: draft again)</span>
            <input maxLength={280} value={reply} onChange={(e) => setReply(e.target.value)} />
          </label>
          <button type="submit" disabled={redraft.isPending}>
            Redraft reply
          </button>
        </form>
      )}
      {error && <ErrorState error={error} />}
      <ConfirmDialog
        open={takingDown}
        title="Take down this app?"
        body={
          <>
            <p>
              <span className="breakable">{job.app_url}</span> answers 410 Gone at once, on every edge, and its media
              are removed.
            </p>
            {takeDown.error && <ErrorState error={takeDown.error} />}
          </>
        }
        confirmLabel="Take down"
        busy={takeDown.isPending}
        onConfirm={() => takeDown.mutate(job.id, { onSuccess: () => setTakingDown(false) })}
        onClose={() => setTakingDown(false)}
      />
    </Section>
  );
}

function Job({ job, operator }: { job: XBuild; operator: boolean }) {
  const cancel = useCancelBuild();
  return (
    <>
      <dl className="tiles">
        <div>
          <dt>Status</dt>
          <dd>{job.status}</dd>
        </div>
        <div>
          <dt>Lane</dt>
          <dd>{job.lane === 'x' ? 'X post' : 'API'}</dd>
        </div>
        <div>
          <dt>Total</dt>
          <dd>{seconds(job.total_s)}</dd>
        </div>
        {job.position ? (
          <div>
            <dt>Position</dt>
            <dd>{job.position}</dd>
          </div>
        ) : null}
      </dl>
      <p className="breakable">
        <strong>Prompt:</strong> {job.source?.type === 'x' ? job.source.text : (job.prompt ?? '—')}
      </p>
      {job.app_url && (
        <p>
          {job.taken_down_at ? (
            <>Taken down {dateTime(job.taken_down_at)}.</>
          ) : (
            <a href={job.app_url} target="_blank" rel="noreferrer" className="breakable">
              Open the published app
            </a>
          )}
        </p>
      )}
      {job.refusal && (
        <p role="alert" className="state error">
          Refused ({job.refusal.category}): {job.refusal.reason}
        </p>
      )}
      {job.error && (
        <p role="alert" className="state error">
          {job.error}
        </p>
      )}
      {!SETTLED.includes(job.status) && (
        <div className="actions">
          <button type="button" className="danger" disabled={cancel.isPending} onClick={() => cancel.mutate(job.id)}>
            Cancel build
          </button>
        </div>
      )}
      {cancel.error && <ErrorState error={cancel.error} />}
      <Section title="The app">
        <Media job={job} />
      </Section>
      <Section title="Reply draft">
        {job.reply ? (
          <>
            <blockquote className="breakable">{job.reply.text}</blockquote>
            <p className="note">
              Reply {job.reply.status}
              {job.reply.posted_at ? `, posted ${dateTime(job.reply.posted_at)}` : ''}
            </p>
          </>
        ) : (
          <p>No reply drafted yet.</p>
        )}
      </Section>
      <Section title="Stages">
        <Table<Stage>
          caption="Stage timings"
          rows={job.stages ?? []}
          rowKey={(stage) => `${stage.name}-${stage.started_at}`}
          columns={[
            { header: 'Stage', cell: (stage) => stage.name },
            { header: 'Started', cell: (stage) => dateTime(stage.started_at) },
            { header: 'Took', cell: (stage) => (stage.ended_at ? seconds(stage.seconds) : 'Running'), numeric: true },
          ]}
        />
      </Section>
      {operator && <OperatorActions job={job} />}
    </>
  );
}

/** One build: its app, screenshot and clip, reply draft and stage timings, refreshed until it settles. */
export function JobPage({ id, operator }: { id: string; operator: boolean }) {
  const job = useXBuild(id);
  return (
    <Page title="Build" actions={<Link to="x-builds">All builds</Link>}>
      <QueryView query={job} what="the build">
        {(loaded) => <Job job={loaded} operator={operator} />}
      </QueryView>
    </Page>
  );
}
