import { z } from 'zod';
import { DateTime, NO_CONTENT } from '../common';
import { defineRoute, type RouteSpec } from '../route';

const TAG = 'Authentication';

export const User = z
  .object({
    id: z.string().meta({ description: '`usr_…`' }),
    object: z.literal('user'),
    email: z.string().meta({ description: 'Lowercased.' }),
    created_at: DateTime,
  })
  .loose()
  .meta({ id: 'User' });

const Email = z.email().max(254).meta({ description: 'Compared without regard to case.' });

const SignUpBody = z
  .strictObject({ email: Email, password: z.string().min(8).max(256).meta({ description: '8 to 256 characters; stored only as a salted scrypt hash.' }) })
  .meta({ id: 'SignUp' });

const SignInBody = z.strictObject({ email: Email, password: z.string().min(1).max(256) }).meta({ id: 'SignIn' });

export const signUp = defineRoute({
  operationId: 'signUp',
  method: 'post',
  path: '/v1/auth/signup',
  summary: 'Create a user',
  description: 'Open only when the service enables sign-up (`SBC_SIGNUP_ENABLED`; on in embedded mode); otherwise 404. An email already in use is 409.',
  tag: TAG,
  auth: { kind: 'none' },
  body: SignUpBody,
  responses: { 201: { description: 'The new user; sign in next.', schema: z.object({ user: User }).loose().meta({ id: 'SignUpResult' }) } },
  errors: [404, 409, 429],
});

export const createSession = defineRoute({
  operationId: 'createSession',
  method: 'post',
  path: '/v1/auth/sessions',
  summary: 'Sign in',
  description: 'A wrong email and a wrong password are the same 401, with no hint which. The token is a bearer for every route, not narrowed by scopes, for 30 days or until signed out.',
  tag: TAG,
  auth: { kind: 'none' },
  body: SignInBody,
  responses: {
    201: {
      description: 'The session. The token is shown this once.',
      schema: z
        .object({ token: z.string().meta({ description: '`sbs_…`' }), expires_at: DateTime, user: User })
        .loose()
        .meta({ id: 'Session' }),
    },
  },
  errors: [401, 429],
});

export const endCurrentSession = defineRoute({
  operationId: 'endCurrentSession',
  method: 'delete',
  path: '/v1/auth/sessions/current',
  summary: 'Sign out',
  description: 'Ends the session that calls; its token is refused with 401 from the next call, at every edge.',
  tag: TAG,
  auth: { kind: 'session' },
  responses: { 204: NO_CONTENT },
});

export const AUTH_ROUTES: RouteSpec[] = [signUp, createSession, endCurrentSession];
