import { useState } from 'react';
import type { Project } from '../../api/types';
import { count, dateTime } from '../../ui/format';
import { Section } from '../../ui/page';
import { QueryView } from '../../ui/states';
import { Table } from '../../ui/table';
import { useProjectFile, useProjectFiles } from './use-runs';

type WorkspaceFile = NonNullable<ReturnType<typeof useProjectFiles>['data']>['data'][number];

function FileContent({ projectId, path }: { projectId: string; path: string }) {
  const file = useProjectFile(projectId, path);
  return (
    <QueryView query={file} what={path}>
      {(shown) => (
        // Shown as text, never as markup: whatever a run wrote stays inert.
        <pre className="breakable" role="region" tabIndex={0} aria-label={`Content of ${shown.path}`}>
          {shown.content}
        </pre>
      )}
    </QueryView>
  );
}

/** The files a project's runs wrote to its workspace; one opened shows its text. */
export function ProjectFiles({ project }: { project: Project }) {
  const files = useProjectFiles(project.id);
  const [opened, setOpened] = useState<string>();
  return (
    <Section title={`Files of ${project.name}`}>
      <QueryView
        query={files}
        what="its files"
        empty={(page) => page.data.length === 0}
        emptyMessage={<p>No files yet: a run writes them with its write_file tool.</p>}
      >
        {(page) => (
          <Table<WorkspaceFile>
            caption={`Files of ${project.name}`}
            rows={page.data}
            rowKey={(file) => file.path}
            columns={[
              {
                header: 'Path',
                cell: (file) => (
                  <button
                    type="button"
                    className="link breakable"
                    aria-label={`Open ${file.path}`}
                    aria-pressed={file.path === opened}
                    onClick={() => setOpened(file.path)}
                  >
                    {file.path}
                  </button>
                ),
              },
              { header: 'Size', cell: (file) => `${count(file.size)} B` },
              { header: 'Updated', cell: (file) => dateTime(file.updated_at) },
            ]}
          />
        )}
      </QueryView>
      {opened && <FileContent key={opened} projectId={project.id} path={opened} />}
    </Section>
  );
}
