import { ROUTES } from '@sbc/api';
import { SCOPES } from '@sbc/scopes';
import { startStack, type AccountSurfaceStack } from '../support/stack';

// Every scoped route of the service, called with a key that holds every scope except the ones the route needs.
const scoped = ROUTES.flatMap((route) => (route.auth.kind === 'scoped' ? [{ route, scopes: route.auth.scopes }] : []));

describe('scope matrix: each scoped route refuses a key lacking its scope', () => {
  let stack: AccountSurfaceStack;
  beforeAll(async () => {
    stack = await startStack({ label: 'scope_matrix' });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('covers the scopes of the gateway and the account surface', () => {
    const covered = new Set(scoped.flatMap(({ scopes }) => scopes));
    for (const scope of [
      'gateway:invoke',
      'keys:read',
      'keys:write',
      'endpoints:read',
      'endpoints:write',
      'teams:read',
      'teams:write',
      'devices:read',
      'devices:write',
    ] as const) {
      expect({ scope, covered: covered.has(scope) }).toEqual({ scope, covered: true });
    }
  });

  it.each(scoped.map(({ route, scopes }) => [`${route.method.toUpperCase()} ${route.path}`, route, scopes] as const))(
    '%s → 403 insufficient_scope with required_scopes',
    async (_name, route, scopes) => {
      const key = await stack.seedKey({ scopes: SCOPES.filter((scope) => !scopes.includes(scope)) });
      // Path parameters are placeholders: the scope check comes before the route looks anything up.
      const path = route.path.replace(/\{[^}]+\}/g, 'placeholder');
      const answer = await stack.api(route.method.toUpperCase(), path, {
        key: key.secret,
        body: route.method === 'get' || route.method === 'delete' ? undefined : {},
      });
      expect(answer.status).toBe(403);
      expect(answer.body).toMatchObject({ error: 'insufficient_scope', required_scopes: scopes });
    },
  );
});
