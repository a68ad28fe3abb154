import { useMutation, useQuery, useQueryClient, type QueryClient } from '@tanstack/react-query';
import { ApiFailure, call } from './client';
import { SESSION_KEY } from './queries';
import { createConsoleSession, endCurrentSession, getConsoleSession, signUp } from './routes';
import type { ConsoleSession, SignInBody } from './types';

const EMAIL_KEY = 'sbc.console.email';
// Set by the edge beside the HttpOnly session cookie, holding no secret (apps/gateway/src/auth/console-cookie.ts).
const SIGNED_IN_HINT = 'sbc_signed_in=1';

const hasSignedInHint = () => document.cookie.split(';').some((pair) => pair.trim() === SIGNED_IN_HINT);
const dropSignedInHint = () => (document.cookie = 'sbc_signed_in=; Max-Age=0; Path=/; SameSite=Strict');

/** Another person's data must not outlive a sign-in or sign-out; the session query itself stays observed. */
function forgetAccountData(client: QueryClient): void {
  client.removeQueries({ predicate: (query) => query.queryKey[0] !== SESSION_KEY[0] });
}

/** The signed-in person, or null when signed out. */
export function useSession() {
  return useQuery({
    queryKey: SESSION_KEY,
    queryFn: async (): Promise<ConsoleSession | null> => {
      // Without the hint this browser holds no session here: asking would only earn a 401 in the browser's log.
      if (!hasSignedInHint()) return null;
      try {
        const session = await call(getConsoleSession, {});
        // The cookie is unreadable by design; the email shown is the one this tab signed in with.
        const email = window.sessionStorage.getItem(EMAIL_KEY) ?? undefined;
        return { ...session, user: { ...session.user, email } };
      } catch (error) {
        if (!isSignedOut(error)) throw error;
        dropSignedInHint();
        return null;
      }
    },
    staleTime: 60_000,
  });
}

export function useSignIn() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: SignInBody) => call(createConsoleSession, { body }),
    onSuccess: (session) => {
      if (session.user.email) window.sessionStorage.setItem(EMAIL_KEY, session.user.email);
      forgetAccountData(client);
      client.setQueryData(SESSION_KEY, session);
      // Only the session read says whether this person is an operator; without it an operator's controls
      // stayed hidden until a reload.
      void client.invalidateQueries({ queryKey: SESSION_KEY });
    },
  });
}

export function useSignUp() {
  return useMutation({ mutationFn: (body: SignInBody) => call(signUp, { body }) });
}

export function useSignOut() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => call(endCurrentSession, {}),
    onSettled: () => {
      window.sessionStorage.removeItem(EMAIL_KEY);
      dropSignedInHint();
      forgetAccountData(client);
      client.setQueryData(SESSION_KEY, null);
    },
  });
}

/** A read answered 401: the session ended elsewhere (signed out at another tab or edge, or expired). */
export function forgetEndedSession(client: QueryClient): void {
  dropSignedInHint();
  client.setQueryData(SESSION_KEY, null);
}

/** Any query answered 401 means the session ended (signed out elsewhere, expired): back to sign-in. */
export function isSignedOut(error: unknown): boolean {
  return error instanceof ApiFailure && error.status === 401;
}
