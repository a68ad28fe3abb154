import { workspacePathProblem } from './workspace-path';

describe('workspacePathProblem', () => {
  it.each(['notes.md', 'src/app.ts', 'a/b/c.d.e', '..hidden', 'x..y/z', 'spaces are fine.txt', 'é/ü.md'])(
    'accepts the workspace path %j',
    (path) => {
      expect(workspacePathProblem(path)).toBeUndefined();
    },
  );

  it.each([
    ['', /1 to 256/],
    ['a'.repeat(257), /1 to 256/],
    ['/etc/passwd', /relative/],
    ['\\windows\\win.ini', /relative/],
    ['C:/boot.ini', /relative/],
    ['../secret', /\.\./],
    ['a/../../b', /\.\./],
    ['a\\..\\b', /\.\./],
    ['..', /\.\./],
    ['a\u0000b', /control/],
    ['a\nb', /control/],
  ])('refuses %j', (path, reason) => {
    expect(workspacePathProblem(path)).toMatch(reason);
  });
});
