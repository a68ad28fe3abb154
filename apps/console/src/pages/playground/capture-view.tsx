import type { CallCapture } from '../../api/types';
import { count, ms, usd } from '../../ui/format';

type Attempt = CallCapture['attempts'][number];

// A call costs a fraction of a credit: three significant digits, never a bare "0".
const credits = new Intl.NumberFormat('en-US', { maximumSignificantDigits: 3 });

const UPSTREAM_DIALECTS: Record<Attempt['upstream_dialect'], string> = {
  openai: 'OpenAI chat completions',
  anthropic: 'Anthropic messages',
};

/** A body as a person reads it: JSON indented; anything else (server-sent events) as it came. */
function readable(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}

function Headers({ headers }: { headers: Record<string, string> }) {
  return (
    <dl className="facts">
      {Object.entries(headers).map(([name, value]) => (
        <div key={name} className="fact">
          <dt>{name}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

/** A scrolling code block reachable by keyboard (it scrolls), named for screen readers. */
function Code({ label, text, truncated }: { label: string; text: string; truncated: number }) {
  return (
    <>
      <pre className="code" tabIndex={0} role="region" aria-label={label}>
        {readable(text)}
      </pre>
      {truncated > 0 && <p className="note">{count(truncated)} more bytes were not kept (256 KiB at most).</p>}
    </>
  );
}

function AttemptView({ attempt, index, of }: { attempt: Attempt; index: number; of: number }) {
  const dialect = UPSTREAM_DIALECTS[attempt.upstream_dialect];
  const which = of > 1 ? ` (attempt ${index + 1} of ${of})` : '';
  return (
    <>
      <h4>
        Upstream request{which}: {dialect}
      </h4>
      <p className="breakable">
        <code>
          {attempt.method} {attempt.url ?? attempt.path}
        </code>{' '}
        · model <code>{attempt.model}</code>
      </p>
      <Headers headers={attempt.request.headers} />
      <Code
        label={`Upstream request body${which}`}
        text={attempt.request.body}
        truncated={attempt.request.truncated_bytes}
      />
      {attempt.response ? (
        <>
          <h4>
            Upstream reply{which}: HTTP {attempt.response.status}, {dialect}
          </h4>
          <Headers headers={attempt.response.headers} />
          <Code
            label={`Upstream reply body${which}`}
            text={attempt.response.body}
            truncated={attempt.response.truncated_bytes}
          />
        </>
      ) : (
        <p className="error">No reply: {attempt.error ?? 'the upstream did not answer'}.</p>
      )}
      {attempt.response && attempt.error && <p className="error">The reply broke off: {attempt.error}.</p>}
    </>
  );
}

/** The call's figures from its usage row, as the edge recorded them. */
export function UsageFacts({ capture }: { capture: CallCapture }) {
  const usage = capture.usage;
  const facts: [string, string][] = [
    ['Latency', ms(usage.latency_ms)],
    ['Time to first token', ms(usage.ttft_ms)],
    ['Tokens in', count(usage.input_tokens)],
    ['Tokens out', count(usage.output_tokens)],
    ['Cost at list price', usd(usage.total_cost)],
    ['Credits charged', credits.format(usage.credits_charged)],
    ['Served by', usage.served_by || '—'],
  ];
  return (
    <dl className="facts" aria-label="Usage">
      {facts.map(([label, value]) => (
        <div key={label} className="fact">
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

/** What the upstream received and sent back, each in its own dialect, for every attempt the call made. */
export function CaptureView({ capture }: { capture: CallCapture }) {
  if (capture.attempts.length === 0) return <p className="note">No upstream was called.</p>;
  return (
    <>
      {capture.attempts.map((attempt, index) => (
        <AttemptView key={index} attempt={attempt} index={index} of={capture.attempts.length} />
      ))}
    </>
  );
}
