import type { MessageInitShape } from '@bufbuild/protobuf';
import type { BudgetSchema } from '@sbc/proto/sbc/account/v1/teams_pb';
import type { StoredBudget } from '../store/budget-column';

/** A stored spend cap as the team, member and principal messages carry it; undefined for none. */
export function toProtoBudget(budget: StoredBudget | null): MessageInitShape<typeof BudgetSchema> | undefined {
  if (!budget) return undefined;
  return { credits: BigInt(budget.credits), period: budget.period, timeZone: budget.time_zone, anchor: budget.anchor };
}
