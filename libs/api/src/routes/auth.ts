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
  .strictObject({
    email: Email,
    password: z
      .string()
      .min(8)
      .max(256)
      .meta({ description: '8 to 256 characters; stored only as a salted scrypt hash.' }),
  })
  .meta({ id: 'SignUp' });

const SignInBody = z.strictObject({ email: Email, password: z.string().min(1).max(256) }).meta({ id: 'SignIn' });

export const signUp = defineRoute({
  operationId: 'signUp',
  method: 'post',
  path: '/v1/auth/signup',
  summary: 'Create a user',
  description:
    'Open only when the service enables sign-up (`SBC_SIGNUP_ENABLED`; on in embedded mode); otherwise 404. An email ' +
    'already in use is 409.',
  tag: TAG,
  auth: { kind: 'none' },
  body: SignUpBody,
  responses: {
    201: {
      description: 'The new user; sign in next.',
      schema: z.object({ user: User }).loose().meta({ id: 'SignUpResult' }),
    },
  },
  errors: [404, 409, 429],
});

export const createSession = defineRoute({
  operationId: 'createSession',
  method: 'post',
  path: '/v1/auth/sessions',
  summary: 'Sign in',
  description:
    'A wrong email and a wrong password are the same 401, with no hint which. The token is a bearer for every route, ' +
    'not narrowed by scopes, for 30 days or until signed out.',
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
  description:
    'Ends the session that calls (a session token, or the console cookie, which is cleared with its ' +
    '`sbc_signed_in` hint); its token is refused ' +
    'with 401 from the next call, at every edge.',
  tag: TAG,
  auth: { kind: 'session' },
  responses: { 204: NO_CONTENT },
});

export const ConsoleSession = z
  .object({
    object: z.literal('console_session'),
    user: z.object({ id: z.string(), email: z.string().optional() }).loose(),
    operator: z.boolean().optional().meta({ description: "One of the service's operators (GET only)." }),
    expires_at: DateTime.optional(),
  })
  .loose()
  .meta({ id: 'ConsoleSession' });

export const createConsoleSession = defineRoute({
  operationId: 'createConsoleSession',
  method: 'post',
  path: '/v1/auth/console/session',
  summary: 'Sign in to the console',
  description:
    'Signs in as POST /v1/auth/sessions does, but the session token goes into an `HttpOnly; SameSite=Strict` cookie ' +
    '(`Secure` on https) instead of the body, so page scripts never see it. Beside it goes `sbc_signed_in=1`, ' +
    'readable by the page and holding no secret, so the console can tell it has a session without asking. ' +
    'That cookie then authenticates every route as the session would; writes it authenticates must be same-origin ' +
    'requests (`Sec-Fetch-Site: same-origin` or a matching `Origin`), else 403. ' +
    'This route too refuses a cross-site request with 403. Sign ' +
    'out with DELETE /v1/auth/sessions/current, which also ' +
    'clears the cookie.',
  tag: TAG,
  auth: { kind: 'none' },
  body: SignInBody,
  responses: { 201: { description: 'Signed in; the cookie is set (`Set-Cookie`).', schema: ConsoleSession } },
  errors: [401, 403, 429],
});

export const getConsoleSession = defineRoute({
  operationId: 'getConsoleSession',
  method: 'get',
  path: '/v1/auth/console/session',
  summary: 'The signed-in person',
  description: 'Who the calling session (the console cookie, or a session token) belongs to; 401 when signed out.',
  tag: TAG,
  auth: { kind: 'session' },
  responses: { 200: { description: 'The session.', schema: ConsoleSession } },
});

export const AUTH_ROUTES: RouteSpec[] = [
  signUp,
  createSession,
  endCurrentSession,
  createConsoleSession,
  getConsoleSession,
];
