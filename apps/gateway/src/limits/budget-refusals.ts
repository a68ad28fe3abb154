import { millicreditsFromCredits } from '@sbc/money';
import { periodWords, type CapScope, type SpendCap } from './team-caps';

// What a 402 says, per budget: the words a person reads to know which cap it was and when it frees up.

/** The budgets a call can be refused by. */
export type BudgetKind = 'account' | 'key_daily' | 'key_monthly' | 'team' | 'member' | 'fair_use';

/** Whole millicredits as credits for people: `12`, `0.25`, `10,000.5`. */
export function creditsText(milli: number): string {
  const whole = Math.trunc(Math.max(0, milli) / 1000);
  const fraction = String(Math.max(0, milli) % 1000)
    .padStart(3, '0')
    .replace(/0+$/, '');
  return whole.toLocaleString('en-US') + (fraction ? `.${fraction}` : '');
}

/** A team or member cap's refusal: which cap, its size and period, and when the next period starts. */
export function capRefusal(scope: CapScope, cap: SpendCap, resetsAt: Date): string {
  const whose = scope === 'team' ? "The team's" : 'Your';
  const where = scope === 'team' ? '' : ' in this team';
  const credits = creditsText(millicreditsFromCredits(cap.credits));
  return (
    `${whose} ${periodWords(cap)} budget of ${credits} credits${where} is spent; ` +
    `it resets at ${resetsAt.toISOString()} (${cap.timeZone}).`
  );
}

/** The fixed message of a key cap, fair use or an empty account. */
export function messageFor(kind: BudgetKind): string {
  switch (kind) {
    case 'key_daily':
      return "This key's daily spend cap is reached; it resets at 00:00 UTC.";
    case 'key_monthly':
      return "This key's monthly spend cap is reached; it resets on the 1st (UTC).";
    case 'fair_use':
      return 'The house-fast fair-use allowance is spent and the account has no credits left to bill the call.';
    default:
      return 'The account has no credits left for this call.';
  }
}
