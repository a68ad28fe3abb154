import { useState, type ReactNode } from 'react';
import { ConfirmDialog } from './dialog';
import { ErrorState } from './states';

/** The write behind a row action: made on the row's id; its refusal is shown in the dialog. */
interface RowMutation {
  mutate: (id: string, options: { onSuccess: () => void }) => void;
  reset: () => void;
  isPending: boolean;
  error: unknown;
}

/**
 * A destructive action on one row of a list (cancel, delete), asked about first in one dialog for the whole list:
 * `ask` opens it for a row, `row` is the one asked about.
 */
export function useRowAction<Row extends { id: string }>(mutation: RowMutation) {
  const [row, setRow] = useState<Row>();
  return {
    mutation,
    row,
    ask: (chosen: Row) => (mutation.reset(), setRow(chosen)),
    close: () => setRow(undefined),
  };
}

type RowAction<Row extends { id: string }> = ReturnType<typeof useRowAction<Row>>;

/** The row's button, named after the action and the row ("Cancel batch_…") so each is found by its row's id. */
export function RowActionButton<Row extends { id: string }>({
  action,
  row,
  label,
}: {
  action: RowAction<Row>;
  row: Row;
  label: string;
}) {
  return (
    <button type="button" className="danger" aria-label={`${label} ${row.id}`} onClick={() => action.ask(row)}>
      {label}
    </button>
  );
}

/**
 * The list's confirmation: `what` says what the action does to the row asked about; confirming makes the write, and
 * the dialog closes once it succeeds or shows why it was refused.
 */
export function RowActionDialog<Row extends { id: string }>({
  action,
  title,
  confirmLabel,
  what,
}: {
  action: RowAction<Row>;
  title: string;
  confirmLabel: string;
  what: (row: Row) => ReactNode;
}) {
  const { mutation, row } = action;
  return (
    <ConfirmDialog
      open={!!row}
      title={title}
      body={
        row && (
          <>
            <p>{what(row)}</p>
            {!!mutation.error && <ErrorState error={mutation.error} />}
          </>
        )
      }
      confirmLabel={confirmLabel}
      busy={mutation.isPending}
      onConfirm={() => row && mutation.mutate(row.id, { onSuccess: action.close })}
      onClose={action.close}
    />
  );
}
