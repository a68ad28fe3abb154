import { useState, type FormEvent } from 'react';
import { ApiFailure } from '../../api/client';
import { useApiQuery } from '../../api/queries';
import { listModels } from '../../api/routes';
import { Page, Section } from '../../ui/page';
import { ErrorState, Loading, QueryView } from '../../ui/states';
import { ms } from '../../ui/format';
import { CaptureView, UsageFacts } from './capture-view';
import { DIALECT_LABELS, type PlaygroundDialect, type PlaygroundPrompt, type PlaygroundTool } from './dialects';
import { usePlaygroundCall } from './use-playground-call';

const WEATHER_SCHEMA = JSON.stringify(
  { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  null,
  2,
);

/** `text` as a JSON object, or the sentence saying why it is not one. */
function parseObject(text: string, what: string): Record<string, unknown> | string {
  if (!text.trim()) return {};
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // Said below.
  }
  return `${what} must be a JSON object.`;
}

/**
 * Call any model the session can name, in any of the three dialects, streamed or not, with tools; beside
 * the reply, what the upstream received and sent back (the call's capture). Compare puts a second model on the
 * same prompt. These are ordinary calls: billed, limited and in the request log.
 */
export function PlaygroundPage() {
  const models = useApiQuery(listModels, {});
  const first = usePlaygroundCall();
  const second = usePlaygroundCall();
  const [dialect, setDialect] = useState<PlaygroundDialect>('chat');
  const [model, setModel] = useState('');
  const [compare, setCompare] = useState(false);
  const [otherModel, setOtherModel] = useState('');
  const [system, setSystem] = useState('');
  const [prompt, setPrompt] = useState('');
  const [stream, setStream] = useState(true);
  const [maxTokens, setMaxTokens] = useState(256);
  const [extra, setExtra] = useState('');
  const [tools, setTools] = useState<PlaygroundTool[]>([]);
  const [tool, setTool] = useState({ name: '', description: '', parameters: WEATHER_SCHEMA });
  const [problem, setProblem] = useState<{ field: string; message: string }>();

  // The playground talks; embedding models have no prompt to answer.
  const ids = models.data?.data.filter((one) => one.kind !== 'embedding').map((one) => one.id) ?? [];
  const chosen = model || ids[0] || '';
  const chosenOther = otherModel || ids[1] || ids[0] || '';

  const addTool = () => {
    const parameters = parseObject(tool.parameters, 'The parameters schema');
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(tool.name))
      return setProblem({ field: 'tool', message: 'A tool name is 1 to 64 letters, digits, _ or -.' });
    if (typeof parameters === 'string') return setProblem({ field: 'tool', message: parameters });
    if (tools.some((one) => one.name === tool.name))
      return setProblem({ field: 'tool', message: `There is already a tool named ${tool.name}.` });
    setProblem(undefined);
    setTools([...tools, { name: tool.name, description: tool.description, parameters }]);
    setTool({ name: '', description: '', parameters: WEATHER_SCHEMA });
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const fields = parseObject(extra, 'Extra request fields');
    if (typeof fields === 'string') return setProblem({ field: 'extra', message: fields });
    setProblem(undefined);
    const base: PlaygroundPrompt = { model: chosen, system, prompt, stream, maxTokens, tools, extra: fields };
    void first.send(dialect, base);
    if (compare) void second.send(dialect, { ...base, model: chosenOther });
  };

  const modelSelect = (label: string, value: string, onChange: (value: string) => void) => (
    <label>
      {label}
      <select value={value} onChange={(e) => onChange(e.target.value)} required>
        {ids.map((id) => (
          <option key={id} value={id}>
            {id}
          </option>
        ))}
      </select>
    </label>
  );

  return (
    <Page title="Playground">
      <p className="note">
        Calls made here are ordinary calls with your session: billed, limited and in the request log. What the upstream
        received and sent back is kept for you alone for 10 minutes, without any credential.
      </p>
      <Section title="Prompt">
        <QueryView
          query={models}
          what="the models you can call"
          empty={(list) => list.data.length === 0}
          emptyMessage={<p>No model is available to you yet.</p>}
        >
          {() => (
            <form onSubmit={submit} aria-label="Prompt" className="stack playground-form">
              <div className="row">
                <label>
                  Dialect
                  <select value={dialect} onChange={(e) => setDialect(e.target.value as PlaygroundDialect)}>
                    {(Object.keys(DIALECT_LABELS) as PlaygroundDialect[]).map((one) => (
                      <option key={one} value={one}>
                        {DIALECT_LABELS[one]}
                      </option>
                    ))}
                  </select>
                </label>
                {modelSelect('Model', chosen, setModel)}
                <label className="inline">
                  <input type="checkbox" checked={compare} onChange={(e) => setCompare(e.target.checked)} />
                  Compare with a second model
                </label>
                {compare && modelSelect('Second model', chosenOther, setOtherModel)}
              </div>
              <label>
                System prompt (optional)
                <textarea rows={2} value={system} onChange={(e) => setSystem(e.target.value)} />
              </label>
              <label>
                Prompt
                <textarea rows={4} required value={prompt} onChange={(e) => setPrompt(e.target.value)} />
              </label>
              <div className="row">
                <label className="inline">
                  <input type="checkbox" checked={stream} onChange={(e) => setStream(e.target.checked)} />
                  Stream the reply
                </label>
                <label>
                  Output token limit
                  <input
                    type="number"
                    min={1}
                    max={100000}
                    required
                    value={maxTokens}
                    onChange={(e) => setMaxTokens(Number(e.target.value))}
                  />
                </label>
              </div>
              <fieldset aria-describedby={problem?.field === 'tool' ? 'playground-problem' : undefined}>
                <legend>Tools</legend>
                {tools.length > 0 && (
                  <ul className="plain tool-list">
                    {tools.map((one) => (
                      <li key={one.name}>
                        <code>{one.name}</code>{' '}
                        <button
                          type="button"
                          className="link"
                          aria-label={`Remove tool ${one.name}`}
                          onClick={() => setTools(tools.filter((other) => other.name !== one.name))}
                        >
                          Remove
                        </button>
                      </li>
                    ))}
                  </ul>
                )}
                <label>
                  Tool name
                  <input value={tool.name} onChange={(e) => setTool({ ...tool, name: e.target.value })} />
                </label>
                <label>
                  Tool description
                  <input value={tool.description} onChange={(e) => setTool({ ...tool, description: e.target.value })} />
                </label>
                <label className="wide">
                  Parameters (JSON schema)
                  <textarea
                    rows={4}
                    className="mono"
                    value={tool.parameters}
                    onChange={(e) => setTool({ ...tool, parameters: e.target.value })}
                  />
                </label>
                <button type="button" onClick={addTool}>
                  Add tool
                </button>
              </fieldset>
              <label>
                Extra request fields (JSON object, optional)
                <textarea
                  rows={2}
                  className="mono"
                  placeholder='{"top_k": 5}'
                  aria-invalid={problem?.field === 'extra' ? true : undefined}
                  value={extra}
                  onChange={(e) => setExtra(e.target.value)}
                />
              </label>
              {problem && (
                <p role="alert" id="playground-problem" className="error">
                  {problem.message}
                </p>
              )}
              <div className="actions">
                <button type="submit" disabled={first.call?.running || second.call?.running}>
                  {compare ? 'Send to both' : 'Send'}
                </button>
              </div>
            </form>
          )}
        </QueryView>
      </Section>
      {first.call && (
        <div className={compare && second.call ? 'compare' : undefined}>
          <CallColumn run={first} title={compare && second.call ? 'First model' : 'Reply'} beside={!compare} />
          {compare && second.call && <CallColumn run={second} title="Second model" beside={false} />}
        </div>
      )}
    </Page>
  );
}

/** One call's reply, its figures and its upstream side. */
function CallColumn({
  run,
  title,
  beside,
}: {
  run: ReturnType<typeof usePlaygroundCall>;
  title: string;
  /** Alone on a wide screen, the upstream's side stands beside the reply rather than under it. */
  beside: boolean;
}) {
  const { call, capture } = run;
  if (!call) return null;
  const { reply } = call;
  return (
    <Section title={`${title}: ${call.model}`}>
      <div className={beside ? 'beside' : undefined}>
        <div>
          <div className="card" role="region" aria-label="Model reply" aria-live="polite" aria-busy={call.running}>
            {reply.text && <p className="reply-text">{reply.text}</p>}
            {reply.toolCalls.map((one, index) => (
              <p key={index}>
                Tool call <code>{one.name}</code> with <code className="breakable">{one.arguments || '{}'}</code>
              </p>
            ))}
            {reply.error && <p className="error">{reply.error}</p>}
            {call.running && !reply.text && reply.toolCalls.length === 0 && <Loading what="the reply" />}
          </div>
          <dl className="facts">
            <div className="fact">
              <dt>Status</dt>
              <dd>{call.status ?? '—'}</dd>
            </div>
            <div className="fact">
              <dt>In this browser</dt>
              <dd>
                first token {ms(call.firstTokenMs)}, whole reply {ms(call.totalMs)}
              </dd>
            </div>
            <div className="fact">
              <dt>Request id</dt>
              <dd>{call.requestId ?? '—'}</dd>
            </div>
            <div className="fact">
              <dt>Dropped fields</dt>
              <dd>{call.droppedFields.length > 0 ? call.droppedFields.join(', ') : 'none'}</dd>
            </div>
          </dl>
        </div>
        {!call.running && (
          <div>
            <h3>The upstream&apos;s side</h3>
            {!call.requestId ? (
              <p className="note">The call broke off before the gateway answered: there is no upstream side.</p>
            ) : capture.isPending ? (
              <Loading what="the upstream's side" />
            ) : capture.error instanceof ApiFailure && capture.error.status === 404 ? (
              <p className="note">The gateway answered this call itself (a refusal): no upstream was called.</p>
            ) : capture.error ? (
              <ErrorState error={capture.error} retry={() => void capture.refetch()} />
            ) : capture.data ? (
              <>
                <UsageFacts capture={capture.data} />
                <CaptureView capture={capture.data} />
              </>
            ) : null}
          </div>
        )}
      </div>
    </Section>
  );
}
