import type { z } from 'zod';
import type { HttpMethod, ResponseSpec } from '@sbc/api';

/** What the console reads from a libs/api route spec: its literal method and path, its inputs, its answers. */
export interface RouteShape {
  method: HttpMethod;
  path: string;
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  responses: Record<number, ResponseSpec>;
}

/**
 * One API route as the console calls it. Only the method and path travel to the browser: the spec itself is
 * zod schemas, so it crosses over as a type (`R`), and `route<typeof spec>(method, path)` refuses to compile
 * unless both strings are the spec's own.
 */
export interface Route<R extends RouteShape> {
  readonly method: R['method'];
  readonly path: R['path'];
  /** Never set: carries the spec's type to `call` and the hooks. */
  readonly spec?: R;
}

export const route = <R extends RouteShape>(method: R['method'], path: R['path']): Route<R> => ({ method, path });

type Given<T> = [NonNullable<T>] extends [z.ZodNever] ? never : NonNullable<T>;
type Part<Name extends string, T, Optional extends boolean> = [Given<T>] extends [never]
  ? unknown
  : Given<T> extends z.ZodType
    ? Optional extends true
      ? { [K in Name]?: z.input<Given<T>> }
      : { [K in Name]: z.input<Given<T>> }
    : unknown;

/** The path parameters, query and body a route takes, each typed by its spec (the query is always optional). */
export type InputOf<R extends RouteShape> = Part<'params', R['params'], false> &
  Part<'query', R['query'], true> &
  Part<'body', R['body'], false>;

// Looked up by name, not by `keyof`: the spec's responses also carry RouteSpec's `Record<number, ...>`,
// whose keyof is all of `number`.
type Responses<R extends RouteShape> = R['responses'];
type SuccessOf<R extends RouteShape> =
  Responses<R> extends { 200: infer S }
    ? S
    : Responses<R> extends { 201: infer S }
      ? S
      : Responses<R> extends { 202: infer S }
        ? S
        : never;
/** The body of the route's success answer, as its spec's schema outputs it; nothing for a 204. */
export type ResultOf<R extends RouteShape> = [SuccessOf<R>] extends [never]
  ? void
  : SuccessOf<R> extends { schema: infer S extends z.ZodType }
    ? z.output<S>
    : void;

/** `/v1/teams/{team_id}` with `{team_id: 'org_1'}` → `/v1/teams/org_1`, each value encoded. */
export function fillPath(path: string, params: Record<string, unknown> = {}): string {
  return path.replace(/\{([A-Za-z0-9_]+)\}/g, (_whole, name: string) => {
    const value = params[name];
    if (value === undefined || value === null || value === '') throw new Error(`Missing path parameter ${name}.`);
    return encodeURIComponent(String(value));
  });
}
