import { inferTemplates, type PathSample } from './templates';

const paths = (...list: string[]): PathSample[] => list.map((path) => ({ path, bodies: [] }));
const templatesOf = (samples: PathSample[]) => inferTemplates(samples).templates.map((t) => t.template);

describe('path templates', () => {
  it(
    'nested resources: owner and repo are values, issues is vocabulary, the issue number is named from the body that ' +
      'echoes it',
    () => {
      const samples: PathSample[] = [
        { path: '/repos/octo/hello', bodies: [{ name: 'hello', owner: { login: 'octo' } }] },
        { path: '/repos/acme/widgets', bodies: [{ name: 'widgets', owner: { login: 'acme' } }] },
        { path: '/repos/octo/hello/issues', bodies: [] },
        { path: '/repos/acme/widgets/issues', bodies: [] },
        { path: '/repos/octo/hello/issues/42', bodies: [{ number: 42, id: 2048001 }] },
        { path: '/repos/acme/widgets/issues/7', bodies: [{ number: 7, id: 3100377 }] },
      ];
      const { templates, templateOf } = inferTemplates(samples);
      expect(templates.map((t) => t.template)).toEqual([
        '/repos/{owner}/{repo}',
        '/repos/{owner}/{repo}/issues',
        '/repos/{owner}/{repo}/issues/{number}',
      ]);
      expect(templateOf[4]).toBe('/repos/{owner}/{repo}/issues/{number}');
      const issue = templates[2]!;
      expect(issue.params).toEqual([
        { name: 'owner', kinds: ['slug'] },
        { name: 'repo', kinds: ['slug'] },
        { name: 'number', kinds: ['integer'] },
      ]);
      expect(issue.observations).toBe(2);
      expect([...issue.covers]).toEqual([['/repos/{slug}/{slug}/issues/{integer}', 2]]);
    },
  );

  it('numeric segments are values even when only one was seen; a slug seen once stays literal', () => {
    expect(templatesOf(paths('/projects/alpha/builds/17'))).toEqual(['/projects/alpha/builds/{build}']);
  });

  it(
    'several different slugs right after a collection are ' + 'values; the same slugs after a version are endpoints',
    () => {
      expect(templatesOf(paths('/users/mona', '/users/hubot'))).toEqual(['/users/{user}']);
      expect(templatesOf(paths('/v1/customers', '/v1/invoices', '/v1/balance'))).toEqual([
        '/v1/balance',
        '/v1/customers',
        '/v1/invoices',
      ]);
    },
  );

  it('version segments stay literal and keep their own branches', () => {
    expect(templatesOf(paths('/v1/items/1', '/v2/items/2', '/v2/items/3'))).toEqual([
      '/v1/items/{item}',
      '/v2/items/{item}',
    ]);
  });

  it('an action word beside ids stays literal while the ids become a parameter', () => {
    const { templates } = inferTemplates([
      { path: '/v1/customers/cus_Q8cLw2sT5vN1xA', bodies: [{ id: 'cus_Q8cLw2sT5vN1xA' }] },
      { path: '/v1/customers/cus_R2dMx9uV6wP3yB', bodies: [{ id: 'cus_R2dMx9uV6wP3yB' }] },
      { path: '/v1/customers/search', bodies: [{ object: 'search_result' }] },
    ]);
    expect(templates.map((t) => t.template)).toEqual(['/v1/customers/{customer}', '/v1/customers/search']);
    expect(templates[0]!.params).toEqual([{ name: 'customer', kinds: ['id'] }]);
  });

  it(
    'a segment constant across observations stays literal; ' + 'one that varies under a collection becomes a parameter',
    () => {
      expect(templatesOf(paths('/orgs/acme/teams', '/orgs/acme/members'))).toEqual([
        '/orgs/acme/members',
        '/orgs/acme/teams',
      ]);
      expect(templatesOf(paths('/orgs/acme/teams', '/orgs/globex/teams'))).toEqual(['/orgs/{org}/teams']);
    },
  );

  it('a word that recurs under different parents is vocabulary, even right after a parameter', () => {
    expect(
      templatesOf(paths('/repos/octo/hello/issues', '/repos/acme/widgets/issues', '/repos/acme/widgets/pulls')),
    ).toEqual(['/repos/{repo}/{repo2}/issues', '/repos/{repo}/{repo2}/pulls']);
  });

  it('collection names followed by the same word stay literal', () => {
    expect(templatesOf(paths('/billing/invoices/export', '/billing/payments/export'))).toEqual([
      '/billing/invoices/export',
      '/billing/payments/export',
    ]);
  });

  it('dates and UUIDs become typed parameters, mixed kinds are recorded per template', () => {
    const { templates } = inferTemplates([
      { path: '/v2/manifests/2026-03-02', bodies: [{ date: '2026-03-02' }] },
      { path: '/v2/manifests/2026-03-03', bodies: [] },
      ...paths(
        '/v2/shipments/3f2b8c1e-6d4a-4f7b-9e2c-5a1d0b8f7e6c',
        '/v2/shipments/a7d4e2f0-1b3c-4d5e-8f9a-0b1c2d3e4f5a',
      ),
      ...paths('/things/12', '/things/cus_Q8cLw2sT5vN1xA'),
    ]);
    expect(templates.map((t) => [t.template, t.params])).toEqual([
      ['/things/{thing}', [{ name: 'thing', kinds: ['id', 'integer'] }]],
      ['/v2/manifests/{date}', [{ name: 'date', kinds: ['date'] }]],
      ['/v2/shipments/{shipment}', [{ name: 'shipment', kinds: ['uuid'] }]],
    ]);
  });

  it('an id with a file extension keeps the extension as a literal suffix', () => {
    expect(
      templatesOf(
        paths(
          '/2010-04-01/Accounts/AC123abc45/Messages/SM1f2e3d4c.json',
          '/2010-04-01/Accounts/AC123abc45/Messages.json',
        ),
      ),
    ).toEqual([
      '/2010-04-01/Accounts/{account}/Messages.json',
      '/2010-04-01/Accounts/{account}/Messages/{message}.json',
    ]);
  });

  it('segments that are not word-like (emails, encoded text) are always parameters, never literals', () => {
    const { templates } = inferTemplates(paths('/members/jane.doe%40example.com', '/search/a%20b%20c'));
    expect(templates.map((t) => t.template)).toEqual(['/members/{member}', '/search/{search}']);
    expect(templates[0]!.covers).toEqual(new Map([['/members/{email}', 1]]));
  });

  it('the root path and trailing slashes are handled', () => {
    expect(templatesOf(paths('/', '/status/', '/status'))).toEqual(['/', '/status']);
  });

  it('parameter names never repeat within a template', () => {
    expect(templatesOf(paths('/a/1/2', '/a/3/4'))).toEqual(['/a/{a}/{a2}']);
  });
});
