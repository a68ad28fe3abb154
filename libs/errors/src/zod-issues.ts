import type { Issue } from './api-error';

/** The subset of a zod issue this library reads, so the core does not depend on zod itself. */
interface SchemaIssue {
  path: readonly PropertyKey[];
  code: string;
  message: string;
}

/** Converts schema-validation issues into the `issues` shape, paths in dotted form. */
export function issuesFromSchema(issues: readonly SchemaIssue[], prefix: readonly PropertyKey[] = []): Issue[] {
  return issues.map((issue) => ({
    path: [...prefix, ...issue.path].map(String).join('.'),
    code: issue.code,
    message: issue.message,
  }));
}
