import { useCallback } from 'react';
import { useMutation, useQuery, useQueryClient, type UseQueryOptions } from '@tanstack/react-query';
import { call } from './client';
import { fillPath, type InputOf, type ResultOf, type Route, type RouteShape } from './route';

/**
 * Query keys, made here only: a read's key is its filled path's segments then its query, so the key of a
 * resource starts with the key of the collection it is in, and invalidating a path refreshes everything under
 * it (`/v1/teams` covers every team's members and invites).
 */
export const SESSION_KEY = ['session'] as const;
const segments = (path: string) => path.split('/').filter(Boolean);
const queryKeyOf = (path: string, query: unknown) => [...segments(path), query ?? {}];

type ReadOptions<R extends RouteShape> = Pick<
  UseQueryOptions<ResultOf<R>>,
  'enabled' | 'placeholderData' | 'refetchInterval' | 'retry' | 'retryDelay'
>;

/** One read of one route, cached under the key made from its path and query. */
export function useApiQuery<R extends RouteShape>(route: Route<R>, input: InputOf<R>, options: ReadOptions<R> = {}) {
  const { params, query } = input as { params?: Record<string, unknown>; query?: unknown };
  return useQuery({
    queryKey: queryKeyOf(fillPath(route.path, params), query),
    queryFn: () => call(route, input),
    ...options,
  });
}

/**
 * One write to one route. `input` turns what the page passes to `mutate` into the route's params and body;
 * on success the reads under each path `invalidates` names are refreshed, so the page shows what changed
 * without knowing which queries exist.
 */
export function useApiMutation<R extends RouteShape, Variables>(
  route: Route<R>,
  options: { input: (variables: Variables) => InputOf<R>; invalidates: (variables: Variables) => string[] },
) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (variables: Variables) => call(route, options.input(variables)),
    onSuccess: (_result, variables) =>
      Promise.all(options.invalidates(variables).map((path) => client.invalidateQueries({ queryKey: segments(path) }))),
  });
}

/** Refreshes every read under each of `paths`, for changes the page learns of outside a mutation (a live stream). */
export function useRefreshUnder(): (...paths: string[]) => Promise<void> {
  const client = useQueryClient();
  return useCallback(
    async (...paths: string[]) => {
      await Promise.all(paths.map((path) => client.invalidateQueries({ queryKey: segments(path) })));
    },
    [client],
  );
}
