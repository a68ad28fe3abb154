import { useSyncExternalStore, type AnchorHTMLAttributes, type MouseEvent } from 'react';

/** The console lives under /console/; pages are the path after it ('' is the overview). */
const BASE = '/console/';

const listeners = new Set<() => void>();
function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  window.addEventListener('popstate', listener);
  return () => {
    listeners.delete(listener);
    window.removeEventListener('popstate', listener);
  };
}

const snapshot = () => window.location.pathname + window.location.search;

/** The current page and its query, re-rendering on navigation. */
export function useLocation(): { page: string; query: URLSearchParams } {
  const location = useSyncExternalStore(subscribe, snapshot);
  const url = new URL(location, window.location.origin);
  const page = url.pathname.startsWith(BASE) ? url.pathname.slice(BASE.length).replace(/\/+$/, '') : '';
  return { page, query: url.searchParams };
}

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  const href = to.startsWith('/') ? to : BASE + to;
  if (options.replace) window.history.replaceState(null, '', href);
  else window.history.pushState(null, '', href);
  for (const listener of listeners) listener();
  // Move focus to the new page's heading so keyboard and screen-reader users land on it.
  requestAnimationFrame(() => document.querySelector<HTMLElement>('main h1')?.focus());
}

/** An ordinary link (open in new tab works) that navigates in place on a plain click. */
export function Link({ to, ...rest }: { to: string } & AnchorHTMLAttributes<HTMLAnchorElement>) {
  const href = to.startsWith('/') ? to : BASE + to;
  const onClick = (event: MouseEvent<HTMLAnchorElement>) => {
    if (
      event.defaultPrevented ||
      event.button !== 0 ||
      event.metaKey ||
      event.ctrlKey ||
      event.shiftKey ||
      event.altKey
    )
      return;
    event.preventDefault();
    navigate(href);
  };
  return <a href={href} onClick={onClick} {...rest} />;
}
