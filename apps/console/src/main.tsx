import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { ApiFailure } from './api/client';
import { forgetEndedSession, isSignedOut } from './api/session';
import { App } from './app';
import './styles.css';

const queryClient: QueryClient = new QueryClient({
  // A 401 anywhere means the session is over (signed out at another tab or edge, or expired): show sign-in.
  queryCache: new QueryCache({
    onError: (error) => void (isSignedOut(error) && forgetEndedSession(queryClient)),
  }),
  defaultOptions: {
    queries: {
      // A refusal (4xx) will not change by asking again; a network blip or 5xx might.
      retry: (failures, error) => failures < 2 && !(error instanceof ApiFailure && error.status < 500),
      refetchOnWindowFocus: false,
      staleTime: 15_000,
    },
  },
});

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <App />
    </QueryClientProvider>
  </StrictMode>,
);
