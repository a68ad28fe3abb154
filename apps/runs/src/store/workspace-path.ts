import { WORKSPACE_LIMITS } from './workspace';

/**
 * Why `path` cannot name a workspace file, or undefined when it can. A workspace is rows keyed by path, so no
 * path reaches a file system; the rule still refuses every spelling that would mean "outside" to a client or
 * tool that maps paths onto one (absolute, drive-letter, `..` segments, either slash), and control characters.
 */
export function workspacePathProblem(path: string): string | undefined {
  if (path.length === 0 || path.length > WORKSPACE_LIMITS.pathChars)
    return `path must be 1 to ${WORKSPACE_LIMITS.pathChars} characters`;
  if (/[\u0000-\u001f\u007f]/.test(path)) return 'path must not contain control characters';
  if (/^[\\/]/.test(path) || /^[A-Za-z]:/.test(path)) return 'path must be relative to the workspace';
  if (path.split(/[\\/]/).some((segment) => segment === '..')) return 'path must not contain .. segments';
  return undefined;
}
