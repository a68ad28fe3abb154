import { slugOf } from './apps-host';

describe('the apps host recognises its requests by Host header alone', () => {
  it('takes the label before the apps domain, ignoring the port and case', () => {
    expect(slugOf('ball-game-x1y2z3.apps.localhost:8080', 'apps.localhost')).toBe('ball-game-x1y2z3');
    expect(slugOf('Ball-Game.APPS.localhost', 'apps.localhost')).toBe('ball-game');
  });

  it('leaves every other host to the API', () => {
    expect(slugOf('localhost:8080', 'apps.localhost')).toBeUndefined();
    expect(slugOf('apps.localhost', 'apps.localhost')).toBeUndefined();
    expect(slugOf('evilapps.localhost', 'apps.localhost')).toBeUndefined();
    expect(slugOf(undefined, 'apps.localhost')).toBeUndefined();
    expect(slugOf('[::1]:8080', 'apps.localhost')).toBeUndefined();
  });
});
