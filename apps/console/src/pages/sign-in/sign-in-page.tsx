import { useState, type FormEvent } from 'react';
import { ApiFailure } from '../../api/client';
import { useSignIn, useSignUp } from '../../api/session';
import { useLocation } from '../../router/router';
import { signInReason } from './sign-in-reason';

function failureText(error: unknown): string {
  if (error instanceof ApiFailure) {
    if (error.status === 401) return 'That email and password do not match an account.';
    if (error.status === 404) return 'Sign-up is not open on this service; ask its operator for an account.';
    return error.message;
  }
  return 'The service could not be reached.';
}

/** Email and password, through the session routes; sign-up where the service allows it (it answers 404 where not). */
export function SignInPage() {
  const [mode, setMode] = useState<'sign-in' | 'sign-up'>('sign-in');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const signIn = useSignIn();
  const signUp = useSignUp();
  const busy = signIn.isPending || signUp.isPending;
  const error = signUp.error ?? signIn.error;
  const reason = signInReason(useLocation().query.get('next'), window.location.host);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    signIn.reset();
    signUp.reset();
    try {
      if (mode === 'sign-up') await signUp.mutateAsync({ email, password });
      await signIn.mutateAsync({ email, password });
    } catch {
      // Shown below from the mutation's error.
    }
  };

  const title = mode === 'sign-in' ? 'Sign in' : 'Create an account';
  return (
    <main id="main" className="sign-in">
      <h1 tabIndex={-1}>{title}</h1>
      {reason && <p className="reason">{reason}</p>}
      <form onSubmit={submit} aria-label={title}>
        <label>
          Email
          <input
            type="email"
            name="email"
            autoComplete="email"
            required
            value={email}
            onChange={(e) => setEmail(e.target.value)}
          />
        </label>
        <label>
          Password
          <input
            type="password"
            name="password"
            autoComplete={mode === 'sign-in' ? 'current-password' : 'new-password'}
            required
            minLength={mode === 'sign-up' ? 8 : 1}
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        </label>
        {error ? (
          <p role="alert" className="error">
            {failureText(error)}
          </p>
        ) : null}
        <button type="submit" disabled={busy}>
          {busy ? 'Working…' : title}
        </button>
      </form>
      <p>
        {mode === 'sign-in' ? 'No account yet? ' : 'Have an account? '}
        <button type="button" className="link" onClick={() => setMode(mode === 'sign-in' ? 'sign-up' : 'sign-in')}>
          {mode === 'sign-in' ? 'Create one' : 'Sign in instead'}
        </button>
      </p>
    </main>
  );
}
