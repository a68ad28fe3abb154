import type { teamRoutes } from '@sbc/api';
import { fillPath, route, type InputOf, type ResultOf } from './route';

describe('a route as the console calls it', () => {
  it('fills path parameters, each encoded, and refuses to leave one out', () => {
    expect(fillPath('/v1/teams/{team_id}/invites/{code}', { team_id: 'org_1', code: 'a/b c' })).toBe(
      '/v1/teams/org_1/invites/a%2Fb%20c',
    );
    expect(() => fillPath('/v1/teams/{team_id}', {})).toThrow('Missing path parameter team_id.');
  });

  it('takes its method and path only as the spec writes them, and its input and answer from the spec', () => {
    const members = route<typeof teamRoutes.listTeamMembers>('get', '/v1/teams/{team_id}/members');
    expect(members).toEqual({ method: 'get', path: '/v1/teams/{team_id}/members' });
    // @ts-expect-error: not the spec's path
    route<typeof teamRoutes.listTeamMembers>('get', '/v1/team/{team_id}/members');
    // @ts-expect-error: not the spec's method
    route<typeof teamRoutes.listTeamMembers>('post', '/v1/teams/{team_id}/members');

    const input: InputOf<typeof teamRoutes.listTeamMembers> = { params: { team_id: 'org_1' }, query: { limit: 5 } };
    // @ts-expect-error: the path parameter is required
    const missing: InputOf<typeof teamRoutes.listTeamMembers> = { query: { limit: 5 } };
    const answer: ResultOf<typeof teamRoutes.listTeamMembers>['data'][number]['role'] = 'owner';
    // @ts-expect-error: a 204 route answers nothing
    const nothing: ResultOf<typeof teamRoutes.removeTeamMember> = { object: 'team_member' };
    expect([input.params.team_id, missing, answer, nothing]).toHaveLength(4);
  });
});
