import type { FormEvent, ReactNode } from 'react';
import { dateTime } from './format';
import { ErrorState } from './states';

// What the pages of resources the API probes on save (custom endpoints, MCP tool servers) share: the add form
// that probes, the probe's outcome in words, and each row's re-probe and delete.

/** What every probe says: whether it answered, why not, and when it ran. */
export interface ProbeOutcome {
  ok: boolean;
  error?: string;
  at?: string;
}

/**
 * A probe's outcome in words: what an answered probe found (`found`, the page's own words), or why it failed, and
 * when. `live` announces it (the result of a save or re-probe just made); `children` follow it as a note.
 */
export function ProbeReport({
  probe,
  found,
  live,
  children,
}: {
  probe: ProbeOutcome | undefined;
  found: string;
  live?: boolean;
  children?: ReactNode;
}) {
  if (!probe) return <span>Not probed yet</span>;
  return (
    <span role={live ? 'status' : undefined} className={probe.ok ? 'ok' : 'bad'}>
      {probe.ok ? found : `Probe failed: ${probe.error ?? 'no reason given'}`}
      {probe.at ? ` (${dateTime(probe.at)})` : ''}
      {children}
    </span>
  );
}

/**
 * The add form of a probed resource: its fields, the refusal if the save was refused, the submit that saves and
 * probes, and under it the latest save's or re-probe's outcome (`last`), announced as it changes.
 */
export function AddAndProbeForm({
  name,
  onSubmit,
  error,
  pending,
  disabled,
  last,
  children,
}: {
  /** The form's accessible name. */
  name: string;
  onSubmit: (event: FormEvent) => void;
  error: unknown;
  pending: boolean;
  disabled?: boolean;
  last: { label: string; report: ReactNode } | undefined;
  children: ReactNode;
}) {
  return (
    <>
      <form onSubmit={onSubmit} aria-label={name} className="stack">
        {children}
        {error ? <ErrorState error={error} /> : null}
        <button type="submit" disabled={pending || disabled}>
          {pending ? 'Adding and probing…' : 'Add and probe'}
        </button>
      </form>
      <div aria-live="polite">
        {last && (
          <p>
            <strong>{last.label}</strong>: {last.report}
          </p>
        )}
      </div>
    </>
  );
}

/** A row's re-probe and delete, each named after the row; `children` go between them (an edit). */
export function ProbedRowActions({
  label,
  probing,
  onProbe,
  onDelete,
  children,
}: {
  label: string;
  probing: boolean;
  onProbe: () => void;
  onDelete: () => void;
  children?: ReactNode;
}) {
  return (
    <div className="actions">
      <button type="button" aria-label={`Re-probe ${label}`} disabled={probing} onClick={onProbe}>
        Re-probe
      </button>
      {children}
      <button type="button" className="danger" aria-label={`Delete ${label}`} onClick={onDelete}>
        Delete
      </button>
    </div>
  );
}
