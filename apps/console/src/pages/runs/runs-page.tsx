import { useState, type FormEvent } from 'react';
import type { Project, Run } from '../../api/types';
import { Link, navigate, useLocation } from '../../router/router';
import { dateTime } from '../../ui/format';
import { Page, Section } from '../../ui/page';
import { ErrorState, QueryView } from '../../ui/states';
import { Table } from '../../ui/table';
import { ProjectFiles } from './project-files';
import { RunDetail } from './run-detail';
import { STATUS_NAMES, useCreateProject, useProjects, useRuns, useStartRun } from './use-runs';
import { Webhooks } from './webhooks';

function NewProject() {
  const create = useCreateProject();
  const [name, setName] = useState('');
  const [instructions, setInstructions] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate(
      { name, ...(instructions.trim() ? { instructions } : {}) },
      { onSuccess: () => (setName(''), setInstructions('')) },
    );
  };
  return (
    <form onSubmit={submit} aria-label="Create a project" className="stack">
      <label>
        Project name
        <input required maxLength={128} value={name} onChange={(e) => setName(e.target.value)} />
      </label>
      <label>
        Instructions <span className="hint">(optional, given to every run of the project)</span>
        <textarea maxLength={20_000} rows={2} value={instructions} onChange={(e) => setInstructions(e.target.value)} />
      </label>
      {create.error && <ErrorState error={create.error} />}
      <div className="actions">
        <button type="submit" disabled={create.isPending || !name.trim()}>
          Create project
        </button>
      </div>
    </form>
  );
}

function StartRun({ projects }: { projects: Project[] }) {
  const start = useStartRun();
  const [projectId, setProjectId] = useState(projects[0]?.id ?? '');
  const [prompt, setPrompt] = useState('');
  const [model, setModel] = useState('');
  const chosen = projects.some((project) => project.id === projectId) ? projectId : (projects[0]?.id ?? '');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    start.mutate(
      { project_id: chosen, prompt, ...(model.trim() ? { model: model.trim() } : {}) },
      { onSuccess: (run) => navigate(`runs?run=${encodeURIComponent(run.id)}`) },
    );
  };
  return (
    <form onSubmit={submit} aria-label="Start a run" className="stack">
      <label>
        Project
        <select value={chosen} onChange={(e) => setProjectId(e.target.value)}>
          {projects.map((project) => (
            <option key={project.id} value={project.id}>
              {project.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Prompt
        <textarea required maxLength={100_000} rows={3} value={prompt} onChange={(e) => setPrompt(e.target.value)} />
      </label>
      <label>
        Model <span className="hint">(optional: the project&apos;s default model, else house)</span>
        <input maxLength={200} value={model} onChange={(e) => setModel(e.target.value)} />
      </label>
      {start.error && <ErrorState error={start.error} />}
      <div className="actions">
        <button type="submit" disabled={start.isPending || !chosen || !prompt.trim()}>
          Start run
        </button>
      </div>
    </form>
  );
}

/** Agent runs: projects, a new run, the runs so far and webhooks; `?run=` opens one run, followed live. */
export function RunsPage() {
  const { query } = useLocation();
  const open = query.get('run');
  const shownProject = query.get('project');
  const projects = useProjects();
  const runs = useRuns();
  if (open) return <RunDetail key={open} runId={open} />;
  const projectName = (id: string) => projects.data?.data.find((project) => project.id === id)?.name ?? id;

  return (
    <Page title="Runs">
      <p>
        An agent run works on a project: it calls a model through this gateway and uses tools over the project&apos;s
        workspace until it answers.
      </p>
      <Section title="Projects">
        <QueryView
          query={projects}
          what="your projects"
          empty={(page) => page.data.length === 0}
          emptyMessage={<p>No projects yet. Create one to start runs on it.</p>}
        >
          {(page) => (
            <>
              <Table<Project>
                caption="Projects"
                rows={page.data}
                rowKey={(project) => project.id}
                columns={[
                  { header: 'Project', cell: (project) => project.name },
                  { header: 'Default model', cell: (project) => project.default_model ?? 'house' },
                  { header: 'Instructions', cell: (project) => project.instructions || '—' },
                  { header: 'Created', cell: (project) => dateTime(project.created_at) },
                  {
                    header: 'Workspace',
                    cell: (project) => (
                      <Link
                        to={`runs?project=${encodeURIComponent(project.id)}`}
                        aria-label={`Files of ${project.name}`}
                        aria-current={project.id === shownProject || undefined}
                      >
                        Files
                      </Link>
                    ),
                  },
                ]}
              />
              {page.data
                .filter((project) => project.id === shownProject)
                .map((project) => (
                  <ProjectFiles key={project.id} project={project} />
                ))}
            </>
          )}
        </QueryView>
        <NewProject />
      </Section>
      {projects.data && projects.data.data.length > 0 && (
        <Section title="Start a run">
          <StartRun projects={projects.data.data} />
        </Section>
      )}
      <Section title="Recent runs">
        <QueryView
          query={runs}
          what="your runs"
          empty={(page) => page.data.length === 0}
          emptyMessage={<p>No runs yet.</p>}
        >
          {(page) => (
            <Table<Run>
              caption="Runs, newest first"
              rows={page.data}
              rowKey={(run) => run.id}
              columns={[
                {
                  header: 'Run',
                  cell: (run) => (
                    <Link to={`runs?run=${encodeURIComponent(run.id)}`} className="breakable">
                      {run.prompt.length > 60 ? `${run.prompt.slice(0, 60)}…` : run.prompt}
                    </Link>
                  ),
                },
                { header: 'Project', cell: (run) => projectName(run.project_id) },
                { header: 'Status', cell: (run) => STATUS_NAMES[run.status] },
                { header: 'Model', cell: (run) => run.model },
                { header: 'Started', cell: (run) => dateTime(run.created_at) },
              ]}
            />
          )}
        </QueryView>
      </Section>
      <Webhooks />
    </Page>
  );
}
