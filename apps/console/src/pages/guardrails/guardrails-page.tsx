import { useEffect, useState, type FormEvent } from 'react';
import { useApiMutation, useApiQuery } from '../../api/queries';
import { createGuardrail, deleteGuardrail, listGuardrails, testGuardrail } from '../../api/routes';
import type { CreateGuardrailBody, Guardrail, GuardrailDetector } from '../../api/types';
import { useKeys, useUpdateKey } from '../../hooks/use-keys';
import { ConfirmDialog } from '../../ui/dialog';
import { Page, Section } from '../../ui/page';
import { ErrorState, QueryView } from '../../ui/states';
import { Table } from '../../ui/table';
import { useTeams, useUpdateTeam } from '../teams/use-teams';

const GUARDRAILS = () => ['/v1/guardrails'];
const BUILT_IN = ['email', 'phone', 'card', 'iban', 'secret'] as const;
const ACTIONS = ['block', 'redact', 'log'] as const;
type Action = (typeof ACTIONS)[number];
type Kind = CreateGuardrailBody['kind'];

const KIND_LABELS: Record<Kind, string> = { detectors: 'Detectors', webhook: 'Webhook', judge: 'Model judge' };

/** The create form's fields, whatever the kind; only the chosen kind's are sent. */
interface Draft {
  name: string;
  kind: Kind;
  teamId: string;
  builtIn: Partial<Record<(typeof BUILT_IN)[number], Action>>;
  words: string;
  wordsAction: Action;
  pattern: string;
  patternAction: Action;
  url: string;
  question: string;
  model: string;
  fail: 'open' | 'closed';
}

const EMPTY: Draft = {
  name: '',
  kind: 'detectors',
  teamId: '',
  builtIn: {},
  words: '',
  wordsAction: 'block',
  pattern: '',
  patternAction: 'redact',
  url: '',
  question: '',
  model: '',
  fail: 'closed',
};

/** The create request a draft makes: the chosen kind's settings only. */
function bodyOf(draft: Draft): CreateGuardrailBody {
  const common = { name: draft.name, ...(draft.teamId ? { team_id: draft.teamId } : {}) };
  if (draft.kind === 'webhook') return { ...common, kind: 'webhook', url: draft.url, fail: draft.fail };
  if (draft.kind === 'judge')
    return {
      ...common,
      kind: 'judge',
      question: draft.question,
      fail: draft.fail,
      ...(draft.model ? { model: draft.model } : {}),
    };
  const detectors: GuardrailDetector[] = BUILT_IN.flatMap((type) => {
    const action = draft.builtIn[type];
    return action ? [{ type, action }] : [];
  });
  const words = draft.words
    .split(',')
    .map((word) => word.trim())
    .filter(Boolean);
  if (words.length > 0) detectors.push({ type: 'words', action: draft.wordsAction, words });
  if (draft.pattern) detectors.push({ type: 'regex', action: draft.patternAction, pattern: draft.pattern });
  return { ...common, kind: 'detectors', detectors };
}

function ActionSelect({ label, value, onChange }: { label: string; value: Action; onChange: (a: Action) => void }) {
  return (
    <select aria-label={label} value={value} onChange={(e) => onChange(e.target.value as Action)}>
      {ACTIONS.map((action) => (
        <option key={action} value={action}>
          {action}
        </option>
      ))}
    </select>
  );
}

/**
 * Guardrails: the policies model calls pass through. Create the account's or a team's, try one on a sample text
 * (the same detectors the calls run), and attach them to keys and teams; the request log shows what they did.
 */
export function GuardrailsPage() {
  const teams = useTeams();
  const [owner, setOwner] = useState('');
  const guardrails = useApiQuery(listGuardrails, { query: owner ? { team_id: owner } : {} });
  const create = useApiMutation(createGuardrail, {
    input: (body: CreateGuardrailBody) => ({ body }),
    invalidates: GUARDRAILS,
  });
  const remove = useApiMutation(deleteGuardrail, {
    input: (id: string) => ({ params: { id } }),
    invalidates: () => ['/v1/guardrails', '/v1/keys', '/v1/teams'],
  });
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const [deleting, setDeleting] = useState<Guardrail>();
  const set = (patch: Partial<Draft>) => setDraft({ ...draft, ...patch });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate(bodyOf(draft), { onSuccess: () => setDraft({ ...EMPTY, teamId: draft.teamId }) });
  };
  const teamList = teams.data?.data ?? [];

  return (
    <Page title="Guardrails">
      <Section title="Create a guardrail">
        <form onSubmit={submit} aria-label="Create a guardrail" className="stack">
          <div className="row">
            <label>
              Name
              <input required maxLength={100} value={draft.name} onChange={(e) => set({ name: e.target.value })} />
            </label>
            <label>
              Kind
              <select value={draft.kind} onChange={(e) => set({ kind: e.target.value as Kind })}>
                {(Object.keys(KIND_LABELS) as Kind[]).map((kind) => (
                  <option key={kind} value={kind}>
                    {KIND_LABELS[kind]}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Belongs to
              <select value={draft.teamId} onChange={(e) => set({ teamId: e.target.value })}>
                <option value="">This account</option>
                {teamList.map((team) => (
                  <option key={team.id} value={team.id}>
                    Team {team.name}
                  </option>
                ))}
              </select>
            </label>
          </div>
          {draft.kind === 'detectors' && (
            <fieldset>
              <legend>Detectors</legend>
              {BUILT_IN.map((type) => (
                <div className="row" key={type}>
                  <label className="inline">
                    <input
                      type="checkbox"
                      checked={draft.builtIn[type] !== undefined}
                      onChange={(e) =>
                        set({ builtIn: { ...draft.builtIn, [type]: e.target.checked ? 'redact' : undefined } })
                      }
                    />
                    {type}
                  </label>
                  {draft.builtIn[type] && (
                    <ActionSelect
                      label={`${type} action`}
                      value={draft.builtIn[type]}
                      onChange={(action) => set({ builtIn: { ...draft.builtIn, [type]: action } })}
                    />
                  )}
                </div>
              ))}
              <div className="row">
                <label>
                  Words (comma-separated)
                  <input value={draft.words} onChange={(e) => set({ words: e.target.value })} />
                </label>
                <ActionSelect
                  label="words action"
                  value={draft.wordsAction}
                  onChange={(wordsAction) => set({ wordsAction })}
                />
              </div>
              <div className="row">
                <label>
                  Regular expression (RE2)
                  <input value={draft.pattern} onChange={(e) => set({ pattern: e.target.value })} />
                </label>
                <ActionSelect
                  label="regex action"
                  value={draft.patternAction}
                  onChange={(patternAction) => set({ patternAction })}
                />
              </div>
            </fieldset>
          )}
          {draft.kind === 'webhook' && (
            <label>
              Webhook URL
              <input required type="url" value={draft.url} onChange={(e) => set({ url: e.target.value })} />
            </label>
          )}
          {draft.kind === 'judge' && (
            <div className="row">
              <label>
                Yes/no question (a yes blocks the call)
                <input
                  required
                  maxLength={2000}
                  value={draft.question}
                  onChange={(e) => set({ question: e.target.value })}
                />
              </label>
              <label>
                Model (blank: house)
                <input value={draft.model} onChange={(e) => set({ model: e.target.value })} />
              </label>
            </div>
          )}
          {draft.kind !== 'detectors' && (
            <label>
              When it cannot answer
              <select value={draft.fail} onChange={(e) => set({ fail: e.target.value as Draft['fail'] })}>
                <option value="closed">Block the call (fail closed)</option>
                <option value="open">Let the call go (fail open)</option>
              </select>
            </label>
          )}
          <button type="submit" disabled={create.isPending}>
            Create guardrail
          </button>
        </form>
        {create.error && <ErrorState error={create.error} />}
        {create.data?.webhook_secret && (
          <p>
            Signing secret, shown this once: <code>{create.data.webhook_secret}</code>
          </p>
        )}
      </Section>
      <Section title="Guardrails">
        <label>
          Show
          <select value={owner} onChange={(e) => setOwner(e.target.value)}>
            <option value="">This account's</option>
            {teamList.map((team) => (
              <option key={team.id} value={team.id}>
                Team {team.name}'s
              </option>
            ))}
          </select>
        </label>
        <QueryView
          query={guardrails}
          what="guardrails"
          empty={(page) => page.data.length === 0}
          emptyMessage={<p>No guardrails yet.</p>}
        >
          {(page) => (
            <Table<Guardrail>
              caption="Guardrails"
              rows={page.data}
              rowKey={(guardrail) => guardrail.id}
              columns={[
                { header: 'Name', cell: (guardrail) => guardrail.name },
                { header: 'Kind', cell: (guardrail) => KIND_LABELS[guardrail.kind] },
                { header: 'Checks', cell: (guardrail) => guardrail.applies_to.join(' and ') },
                { header: 'Id', cell: (guardrail) => <code>{guardrail.id}</code> },
                {
                  header: 'Actions',
                  cell: (guardrail) => (
                    <button
                      type="button"
                      className="danger"
                      aria-label={`Delete ${guardrail.name}`}
                      onClick={() => setDeleting(guardrail)}
                    >
                      Delete
                    </button>
                  ),
                },
              ]}
            />
          )}
        </QueryView>
      </Section>
      <TryGuardrail guardrails={guardrails.data?.data ?? []} />
      <AttachGuardrails guardrails={guardrails.data?.data ?? []} teamId={owner} />
      <ConfirmDialog
        open={!!deleting}
        title="Delete this guardrail?"
        body={<p>{deleting?.name} is detached from every key and team first.</p>}
        confirmLabel="Delete guardrail"
        busy={remove.isPending}
        onConfirm={() => deleting && remove.mutate(deleting.id, { onSuccess: () => setDeleting(undefined) })}
        onClose={() => setDeleting(undefined)}
      />
    </Page>
  );
}

/** A sample text through one detectors guardrail, as a call's text would go: blocked, or what it becomes. */
function TryGuardrail({ guardrails }: { guardrails: Guardrail[] }) {
  const detectors = guardrails.filter((guardrail) => guardrail.kind === 'detectors');
  const [id, setId] = useState('');
  const [text, setText] = useState('');
  const test = useApiMutation(testGuardrail, {
    input: (variables: { id: string; text: string }) => ({
      params: { id: variables.id },
      body: { text: variables.text },
    }),
    invalidates: () => [],
  });
  const chosen = id || detectors[0]?.id || '';
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (chosen) test.mutate({ id: chosen, text });
  };
  const result = test.data;
  return (
    <Section title="Test a guardrail">
      {detectors.length === 0 ? (
        <p>Create a detectors guardrail to try it on a text.</p>
      ) : (
        <form onSubmit={submit} aria-label="Test a guardrail" className="stack">
          <label>
            Guardrail
            <select value={chosen} onChange={(e) => setId(e.target.value)}>
              {detectors.map((guardrail) => (
                <option key={guardrail.id} value={guardrail.id}>
                  {guardrail.name}
                </option>
              ))}
            </select>
          </label>
          <label>
            Sample text
            <textarea rows={3} value={text} onChange={(e) => setText(e.target.value)} />
          </label>
          <button type="submit" disabled={test.isPending}>
            Test
          </button>
        </form>
      )}
      {test.error && <ErrorState error={test.error} />}
      {result && (
        <div role="status" aria-label="Test result">
          {result.blocked ? (
            <p>Blocked (by the {result.blocked_by} detector): the call would be refused.</p>
          ) : (
            <>
              <p>
                Passes
                {result.redacted.length > 0 ? `, with ${result.redacted.join(', ')} redacted` : ''}
                {result.logged.length > 0 ? `; logged: ${result.logged.join(', ')}` : ''}.
              </p>
              <pre className="breakable">{result.text}</pre>
            </>
          )}
        </div>
      )}
    </Section>
  );
}

/**
 * Which keys and teams the listed guardrails apply to: a key's own list (the account's guardrails, or its team's),
 * and a team's (every team key's calls pass through them).
 */
function AttachGuardrails({ guardrails, teamId }: { guardrails: Guardrail[]; teamId: string }) {
  const keys = useKeys();
  const teams = useTeams();
  const updateKey = useUpdateKey();
  const updateTeam = useUpdateTeam(teamId);
  const candidates = (keys.data?.data ?? []).filter((key) => (teamId ? key.org_id === teamId : !key.org_id));
  const [keyId, setKeyId] = useState('');
  const key = candidates.find((one) => one.id === keyId) ?? candidates[0];
  const team = (teams.data?.data ?? []).find((one) => one.id === teamId);
  const [forKey, setForKey] = useState<string[]>([]);
  const [forTeam, setForTeam] = useState<string[]>([]);
  useEffect(() => setForKey(key?.guardrails ?? []), [key]);
  useEffect(() => setForTeam(team?.guardrails ?? []), [team]);
  const toggle = (list: string[], id: string, on: boolean) => (on ? [...list, id] : list.filter((one) => one !== id));

  return (
    <Section title="Attach">
      {guardrails.length === 0 ? (
        <p>No guardrails to attach here.</p>
      ) : (
        <>
          <form
            aria-label="Attach to a key"
            className="stack"
            onSubmit={(event) => {
              event.preventDefault();
              if (key) updateKey.mutate({ id: key.id, body: { guardrails: forKey } });
            }}
          >
            <label>
              Key
              <select value={key?.id ?? ''} onChange={(e) => setKeyId(e.target.value)}>
                {candidates.map((one) => (
                  <option key={one.id} value={one.id}>
                    {one.name}
                  </option>
                ))}
              </select>
            </label>
            {guardrails.map((guardrail) => (
              <label className="inline" key={guardrail.id}>
                <input
                  type="checkbox"
                  checked={forKey.includes(guardrail.id)}
                  onChange={(e) => setForKey(toggle(forKey, guardrail.id, e.target.checked))}
                />
                {guardrail.name}
              </label>
            ))}
            <button type="submit" disabled={!key || updateKey.isPending}>
              Save the key's guardrails
            </button>
            {updateKey.error && <ErrorState error={updateKey.error} />}
          </form>
          {team && (
            <form
              aria-label="Attach to the team"
              className="stack"
              onSubmit={(event) => {
                event.preventDefault();
                updateTeam.mutate({ guardrails: forTeam });
              }}
            >
              <p>Every key of team {team.name} passes through the guardrails checked here.</p>
              {guardrails.map((guardrail) => (
                <label className="inline" key={guardrail.id}>
                  <input
                    type="checkbox"
                    checked={forTeam.includes(guardrail.id)}
                    onChange={(e) => setForTeam(toggle(forTeam, guardrail.id, e.target.checked))}
                  />
                  {guardrail.name}
                </label>
              ))}
              <button type="submit" disabled={updateTeam.isPending}>
                Save the team's guardrails
              </button>
              {updateTeam.error && <ErrorState error={updateTeam.error} />}
            </form>
          )}
        </>
      )}
    </Section>
  );
}
