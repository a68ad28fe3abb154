import { lazy, Suspense, useEffect, type ComponentType } from 'react';
import { useSession, useSignOut } from './api/session';
import { Link, navigate, useLocation } from './router/router';
import { ErrorState, Loading } from './ui/states';
import { SignInPage } from './pages/sign-in/sign-in-page';

// Each page is its own chunk, so the first load carries the shell and the sign-in page only.
const named = <K extends string>(load: () => Promise<Record<K, ComponentType>>, name: K) =>
  lazy(() => load().then((module) => ({ default: module[name] })));
// `inNav: false` pages are reached by a link (an invite's), not from the navigation.
const PAGES: { path: string; label: string; component: ComponentType; inNav?: false }[] = [
  { path: '', label: 'Overview', component: named(() => import('./pages/overview/overview-page'), 'OverviewPage') },
  { path: 'usage', label: 'Usage', component: named(() => import('./pages/usage/usage-page'), 'UsagePage') },
  {
    path: 'playground',
    label: 'Playground',
    component: named(() => import('./pages/playground/playground-page'), 'PlaygroundPage'),
  },
  { path: 'batches', label: 'Batches', component: named(() => import('./pages/batches/batches-page'), 'BatchesPage') },
  {
    path: 'credits',
    label: 'Credits and plan',
    component: named(() => import('./pages/credits/credits-page'), 'CreditsPage'),
  },
  { path: 'spend', label: 'Spend', component: named(() => import('./pages/spend/spend-page'), 'SpendPage') },
  { path: 'keys', label: 'Keys', component: named(() => import('./pages/keys/keys-page'), 'KeysPage') },
  {
    path: 'endpoints',
    label: 'Endpoints',
    component: named(() => import('./pages/endpoints/endpoints-page'), 'EndpointsPage'),
  },
  {
    path: 'tool-servers',
    label: 'Tool servers',
    component: named(() => import('./pages/tool-servers/tool-servers-page'), 'ToolServersPage'),
  },
  { path: 'aliases', label: 'Aliases', component: named(() => import('./pages/aliases/aliases-page'), 'AliasesPage') },
  {
    path: 'guardrails',
    label: 'Guardrails',
    component: named(() => import('./pages/guardrails/guardrails-page'), 'GuardrailsPage'),
  },
  { path: 'teams', label: 'Teams', component: named(() => import('./pages/teams/teams-page'), 'TeamsPage') },
  { path: 'devices', label: 'Devices', component: named(() => import('./pages/devices/devices-page'), 'DevicesPage') },
  {
    path: 'x-builds',
    label: 'X builds',
    component: named(() => import('./pages/x-builds/x-builds-page'), 'XBuildsPage'),
  },
  { path: 'runs', label: 'Runs', component: named(() => import('./pages/runs/runs-page'), 'RunsPage') },
  { path: 'audit', label: 'Audit log', component: named(() => import('./pages/audit/audit-page'), 'AuditPage') },
  {
    path: 'invite',
    label: 'Team invite',
    component: named(() => import('./pages/teams/invite-page'), 'InvitePage'),
    inNav: false,
  },
  {
    path: 'device',
    label: 'Device activation',
    component: named(() => import('./pages/device/device-page'), 'DevicePage'),
  },
];

function Shell({ page, email }: { page: string; email?: string }) {
  const signOut = useSignOut();
  const current = PAGES.find((one) => one.path === page);
  useEffect(() => {
    document.title = `${current?.label ?? 'Not found'} · Console`;
  }, [current]);
  const Current = current?.component;
  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <span className="brand">Gateway console</span>
        <nav aria-label="Console">
          <ul>
            {PAGES.filter((one) => one.inNav !== false).map((one) => (
              <li key={one.path}>
                <Link to={one.path} aria-current={one.path === page ? 'page' : undefined}>
                  {one.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div className="who">
          {email && <span>{email}</span>}
          <button
            type="button"
            onClick={() => signOut.mutate(undefined, { onSettled: () => navigate('sign-in', { replace: true }) })}
            disabled={signOut.isPending}
          >
            Sign out
          </button>
        </div>
      </header>
      <main id="main">
        {Current ? (
          <Suspense fallback={<Loading what="the page" />}>
            <Current />
          </Suspense>
        ) : (
          <>
            <h1 tabIndex={-1}>Page not found</h1>
            <p>
              <Link to="">Go to the overview</Link>
            </p>
          </>
        )}
      </main>
    </>
  );
}

export function App() {
  const { page, query } = useLocation();
  const session = useSession();
  const signedIn = !!session.data;

  // Signed out, every page leads to sign-in and back (the activation page keeps its user_code).
  useEffect(() => {
    if (session.isPending || session.error) return;
    if (!signedIn && page !== 'sign-in') {
      const back = window.location.pathname + window.location.search;
      navigate(`sign-in?next=${encodeURIComponent(back)}`, { replace: true });
    } else if (signedIn && page === 'sign-in') {
      const next = query.get('next');
      navigate(next && next.startsWith('/console/') ? next : '', { replace: true });
    }
  }, [session.isPending, session.error, signedIn, page, query]);

  if (session.isPending)
    return (
      <main id="main">
        <Loading what="your session" />
      </main>
    );
  if (session.error)
    return (
      <main id="main">
        <h1>Console</h1>
        <ErrorState error={session.error} retry={() => void session.refetch()} />
      </main>
    );
  if (!signedIn)
    return page === 'sign-in' ? (
      <SignInPage />
    ) : (
      <main id="main">
        <Loading what="the sign-in page" />
      </main>
    );
  return <Shell page={page} email={session.data?.user.email} />;
}
