import type { ReasoningEffort } from './ir';

/** Every effort the neutral form knows; OpenAI's set grows, and an unknown value is a 400 as OpenAI makes it. */
export const REASONING_EFFORTS: readonly ReasoningEffort[] = [
  'none',
  'minimal',
  'low',
  'medium',
  'high',
  'xhigh',
  'max',
];

/** Anthropic `output_config.effort` knows fewer levels than OpenAI. */
export const ANTHROPIC_EFFORTS: readonly ReasoningEffort[] = ['low', 'medium', 'high', 'xhigh', 'max'];

/**
 * Thinking budgets chosen for OpenAI efforts when the upstream is Anthropic. `minimal` is Anthropic's
 * floor (1024); each step roughly doubles, as OpenAI's efforts roughly do; `max` stays under the 32k
 * Anthropic advises before batch processing.
 */
export const THINKING_BUDGETS: Record<Exclude<ReasoningEffort, 'none'>, number> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16384,
  xhigh: 24576,
  max: 32000,
};

/** Anthropic rejects a thinking budget below this. */
export const MIN_THINKING_BUDGET = 1024;
