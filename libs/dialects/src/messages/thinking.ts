import type { ChatRequest, ReasoningEffort } from '../ir';
import { ANTHROPIC_EFFORTS, MIN_THINKING_BUDGET, THINKING_BUDGETS } from '../reasoning-effort';

/**
 * Anthropic `thinking` and `output_config.effort` for a neutral request (dialects.md §6.1).
 *
 * - An Anthropic-style request (it named a thinking mode) gets that mode back, with its effort as
 *   `output_config.effort`.
 * - An OpenAI effort alone becomes `thinking: enabled` with a budget from `THINKING_BUDGETS`; it is not sent as
 *   `output_config.effort`, which older Claude models reject.
 * - A budget must be ≥ 1024 and below `max_tokens`. Budgets derived from an effort keep half of `max_tokens`
 *   for the answer; a caller's own budget is only cut below `max_tokens`. No valid budget means no thinking.
 * - Anthropic refuses thinking together with a forced tool choice, so a forced choice wins and thinking is off.
 */
export interface ThinkingConfig {
  thinking?: Record<string, unknown>;
  effort?: string;
}

export function thinkingConfig(req: ChatRequest, maxTokens: number): ThinkingConfig {
  const reasoning = req.reasoning;
  if (!reasoning) return {};
  const config: ThinkingConfig = {};
  if (reasoning.mode !== undefined && reasoning.effort !== undefined && ANTHROPIC_EFFORTS.includes(reasoning.effort)) {
    config.effort = reasoning.effort;
  }
  const forcedTool = req.toolChoice?.type === 'required' || req.toolChoice?.type === 'tool';
  switch (reasoning.mode) {
    case 'disabled':
      config.thinking = { type: 'disabled' };
      return config;
    case 'adaptive':
      if (!forcedTool) config.thinking = { type: 'adaptive' };
      return config;
    case 'enabled': {
      const wanted = reasoning.budgetTokens ?? budgetForEffort(reasoning.effort) ?? THINKING_BUDGETS.medium;
      const budget =
        reasoning.budgetTokens !== undefined ? Math.min(wanted, maxTokens - 1) : fitDerived(wanted, maxTokens);
      if (!forcedTool && budget >= MIN_THINKING_BUDGET) config.thinking = { type: 'enabled', budget_tokens: budget };
      return config;
    }
    default: {
      const wanted = budgetForEffort(reasoning.effort);
      if (wanted === undefined || forcedTool) return config;
      const budget = fitDerived(wanted, maxTokens);
      if (budget >= MIN_THINKING_BUDGET) config.thinking = { type: 'enabled', budget_tokens: budget };
      return config;
    }
  }
}

function budgetForEffort(effort: ReasoningEffort | undefined): number | undefined {
  if (effort === undefined || effort === 'none') return undefined;
  return THINKING_BUDGETS[effort];
}

/** At most half of `max_tokens` (but at least the floor), and always below `max_tokens`. */
function fitDerived(wanted: number, maxTokens: number): number {
  const budget = Math.min(wanted, Math.max(MIN_THINKING_BUDGET, Math.floor(maxTokens / 2)));
  return budget < maxTokens ? budget : 0;
}
