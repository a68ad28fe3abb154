import type { ReactNode } from 'react';
import { ApiFailure } from '../api/client';

export function Loading({ what }: { what: string }) {
  return (
    <p role="status" className="state">
      Loading {what}…
    </p>
  );
}

function Empty({ children }: { children: ReactNode }) {
  return <div className="state empty">{children}</div>;
}

/** A refusal as the API worded it; `where` (a line of the person's input, say) leads it when the page knows. */
export function ErrorState({ error, retry, where }: { error: unknown; retry?: () => void; where?: string }) {
  const said = error instanceof ApiFailure ? `${error.message} (${error.code})` : 'The service could not be reached.';
  const message = where ? `${where}: ${said}` : said;
  return (
    <div role="alert" className="state error">
      <p>{message}</p>
      {retry && (
        <button type="button" onClick={retry}>
          Try again
        </button>
      )}
    </div>
  );
}

/**
 * The three states every query goes through: loading, failed (with a retry) and loaded, where `empty` decides
 * whether to show the empty message instead of the content.
 */
export function QueryView<T>({
  query,
  what,
  empty,
  emptyMessage,
  children,
}: {
  query: { data: T | undefined; error: unknown; isPending: boolean; refetch: () => unknown };
  what: string;
  empty?: (data: T) => boolean;
  emptyMessage?: ReactNode;
  children: (data: T) => ReactNode;
}) {
  if (query.isPending) return <Loading what={what} />;
  if (query.error || query.data === undefined)
    return <ErrorState error={query.error} retry={() => void query.refetch()} />;
  if (empty?.(query.data)) return <Empty>{emptyMessage}</Empty>;
  return <>{children(query.data)}</>;
}
