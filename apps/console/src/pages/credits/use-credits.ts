import { useQuery } from '@tanstack/react-query';
import { get } from '../../api/client';
import type { Credits } from '../../api/types';

export function useCredits() {
  return useQuery({ queryKey: ['credits'], queryFn: () => get<Credits>('/v1/credits') });
}
