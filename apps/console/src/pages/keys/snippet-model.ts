import { DEFAULT_MODEL } from '@sbc/agent-setup';

/** The model a snippet names: the key's first allowed model that is not a pattern (`house*`), else `house`. */
export function snippetModel(allowedModels: readonly string[] | null | undefined): string {
  return allowedModels?.find((model) => !/[*?[]/.test(model)) ?? DEFAULT_MODEL;
}
