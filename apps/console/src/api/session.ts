import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiFailure, get, request } from './client';
import type { ConsoleSession, SignInBody, User } from './types';

const SESSION = ['session'] as const;
const EMAIL_KEY = 'sbc.console.email';

/** Another person's data must not outlive a sign-in or sign-out; the session query itself stays observed. */
function forgetAccountData(client: ReturnType<typeof useQueryClient>): void {
  client.removeQueries({ predicate: (query) => query.queryKey[0] !== SESSION[0] });
}

/** The signed-in person, or null when signed out (401). */
export function useSession() {
  return useQuery({
    queryKey: SESSION,
    queryFn: async (): Promise<ConsoleSession | null> => {
      try {
        const session = await get<ConsoleSession>('/v1/auth/console/session');
        // The cookie is unreadable by design; the email shown is the one this tab signed in with.
        const email = window.sessionStorage.getItem(EMAIL_KEY) ?? undefined;
        return { ...session, user: { ...session.user, email } };
      } catch (error) {
        if (error instanceof ApiFailure && error.status === 401) return null;
        throw error;
      }
    },
    staleTime: 60_000,
  });
}

export function useSignIn() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: SignInBody) => request<ConsoleSession>('POST', '/v1/auth/console/session', body),
    onSuccess: (session) => {
      if (session.user.email) window.sessionStorage.setItem(EMAIL_KEY, session.user.email);
      forgetAccountData(client);
      client.setQueryData(SESSION, session);
    },
  });
}

export function useSignUp() {
  return useMutation({ mutationFn: (body: SignInBody) => request<{ user: User }>('POST', '/v1/auth/signup', body) });
}

export function useSignOut() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => request<void>('DELETE', '/v1/auth/sessions/current'),
    onSettled: () => {
      window.sessionStorage.removeItem(EMAIL_KEY);
      forgetAccountData(client);
      client.setQueryData(SESSION, null);
    },
  });
}

/** Any query answered 401 means the session ended (signed out elsewhere, expired): back to sign-in. */
export function isSignedOut(error: unknown): boolean {
  return error instanceof ApiFailure && error.status === 401;
}
