import { useApiQuery } from '../api/queries';
import { getCredits } from '../api/routes';

// Shared: the Credits page and the overview's balance tile.
export const useCredits = () => useApiQuery(getCredits, {});
