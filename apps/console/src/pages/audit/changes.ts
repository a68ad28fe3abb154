/** One field an audit record's change touched, its values as short text. */
export interface ChangedField {
  field: string;
  before: string;
  after: string;
}

type Snapshot = Record<string, unknown> | null;

const text = (value: unknown) => (value === undefined ? '—' : JSON.stringify(value));

/**
 * The fields whose values differ between a record's `before` and `after`, in the order the resource lists them. A
 * creation lists every field it set, a deletion every field it removed; `updated_at` moves with every change and is
 * left out.
 */
export function changedFields(before: Snapshot, after: Snapshot): ChangedField[] {
  const names = [...new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})])];
  return names
    .filter((name) => name !== 'updated_at')
    .filter((name) => text(before?.[name]) !== text(after?.[name]))
    .map((name) => ({
      field: name,
      before: before ? text(before[name]) : '—',
      after: after ? text(after[name]) : '—',
    }));
}
