import type { CreditAccount as CreditAccountModel, Prisma, PrismaClient } from '../generated/prisma/client';
import { isPlanId, PACKS, periodOf, PLANS, type PlanId } from '../credits/plans';
import { derivePots, type DerivedCredits, type GrantEntry, type Pot } from '../credits/pots';

export type Tx = Prisma.TransactionClient;
type Db = PrismaClient | Tx;

export interface CreditAccountRow {
  accountId: string;
  plan: PlanId;
  overageLimitCredits: number;
  refilledPeriod: string | null;
  lastUsageAt: Date | null;
  lastAppliedAt: Date | null;
  needsReconcile: boolean;
  reconciledAt: Date | null;
}

interface JournalInput {
  kind: 'plan_refill' | 'beta_refill' | 'plan_upgrade' | 'pack' | 'grant';
  pot: Pot;
  credits: number;
  usd?: number;
  period: string;
  note?: string;
}

/** The refills a plan gets at the start of a month (and when an account is first seen). */
function refillsFor(plan: PlanId, period: string): JournalInput[] {
  const { planCredits, betaCredits, priceUsd } = PLANS[plan];
  const entries: JournalInput[] = [];
  if (planCredits > 0)
    entries.push({
      kind: 'plan_refill',
      pot: 'plan',
      credits: planCredits,
      usd: priceUsd,
      period,
      note: `${PLANS[plan].label} plan credits`,
    });
  if (betaCredits > 0)
    entries.push({ kind: 'beta_refill', pot: 'beta', credits: betaCredits, period, note: 'monthly beta pot' });
  return entries;
}

/** Appends journal entries; a month's refill that is already there is skipped (the unique index), never doubled. */
async function appendJournal(db: Db, accountId: string, entries: JournalInput[]): Promise<void> {
  for (const entry of entries) {
    await db.$executeRawUnsafe(
      `INSERT INTO credit_journal (account_id, kind, pot, credits, usd, period, note) VALUES ($1, $2, $3, ` +
        `$4::numeric, $5::numeric, $6, $7)
       ON CONFLICT (account_id, kind, period) WHERE kind IN ('plan_refill', 'beta_refill') DO NOTHING`,
      accountId,
      entry.kind,
      entry.pot,
      entry.credits.toFixed(6),
      (entry.usd ?? 0).toFixed(2),
      entry.period,
      entry.note ?? null,
    );
  }
}

/** The account's row, created on the Free plan with this month's refill when the ledger has not seen it yet. */
export async function ensureCreditAccount(
  db: Db,
  accountId: string,
  now: Date,
): Promise<{ account: CreditAccountRow; created: boolean }> {
  const period = periodOf(now);
  const inserted = await db.$queryRawUnsafe<{ account_id: string }[]>(
    `INSERT INTO credit_accounts (account_id, refilled_period) VALUES ($1, $2) ON CONFLICT (account_id) DO NOTHING ` +
      `RETURNING account_id`,
    accountId,
    period,
  );
  if (inserted.length > 0) await appendJournal(db, accountId, refillsFor('free', period));
  return { account: (await findCreditAccount(db, accountId))!, created: inserted.length > 0 };
}

function toAccount(row: CreditAccountModel): CreditAccountRow {
  return {
    accountId: row.accountId,
    plan: isPlanId(row.plan) ? row.plan : 'free',
    overageLimitCredits: Number(row.overageLimitCredits),
    refilledPeriod: row.refilledPeriod,
    lastUsageAt: row.lastUsageAt,
    lastAppliedAt: row.lastAppliedAt,
    needsReconcile: row.needsReconcile,
    reconciledAt: row.reconciledAt,
  };
}

export async function findCreditAccount(db: Db, accountId: string): Promise<CreditAccountRow | undefined> {
  const row = await (db as PrismaClient).creditAccount.findUnique({ where: { accountId } });
  return row ? toAccount(row) : undefined;
}

/** Grants the month's plan and beta credits if this month's refill has not happened yet. Returns whether it did. */
export async function refillIfDue(db: Db, account: CreditAccountRow, now: Date): Promise<boolean> {
  const period = periodOf(now);
  if (account.refilledPeriod !== null && account.refilledPeriod >= period) return false;
  await appendJournal(db, account.accountId, refillsFor(account.plan, period));
  await db.$executeRawUnsafe(
    `UPDATE credit_accounts SET refilled_period = $2 WHERE account_id = $1`,
    account.accountId,
    period,
  );
  return true;
}

/** Moves an account to a plan. An upgrade adds the difference in plan credits for the rest of this month. */
export async function changePlan(
  db: Db,
  account: CreditAccountRow,
  plan: PlanId,
  overageLimitCredits: number | undefined,
  now: Date,
): Promise<void> {
  const period = periodOf(now);
  const extra = PLANS[plan].planCredits - PLANS[account.plan].planCredits;
  if (extra > 0) {
    const usd = PLANS[plan].priceUsd - PLANS[account.plan].priceUsd;
    await appendJournal(db, account.accountId, [
      { kind: 'plan_upgrade', pot: 'plan', credits: extra, usd, period, note: `upgrade ${account.plan} → ${plan}` },
    ]);
  }
  await db.$executeRawUnsafe(
    `UPDATE credit_accounts SET plan = $2, overage_limit_credits ` +
      `= COALESCE($3::numeric, overage_limit_credits) WHERE ` +
      `account_id = $1`,
    account.accountId,
    plan,
    overageLimitCredits === undefined ? null : overageLimitCredits.toFixed(6),
  );
}

export async function addPack(db: Db, accountId: string, packUsd: number, now: Date): Promise<number> {
  const credits = PACKS[packUsd]!;
  await appendJournal(db, accountId, [
    { kind: 'pack', pot: 'permanent', credits, usd: packUsd, period: periodOf(now), note: `$${packUsd} credit pack` },
  ]);
  return credits;
}

export async function addGrant(db: Db, accountId: string, credits: number, reason: string, now: Date): Promise<void> {
  await appendJournal(db, accountId, [
    { kind: 'grant', pot: 'permanent', credits, period: periodOf(now), note: reason },
  ]);
}

export interface CreditInputs {
  grants: GrantEntry[];
  usageByPeriod: Map<string, number>;
}

/** Everything the balance is derived from: the journal and the monthly credit sums of the daily rollup. */
export async function loadCreditInputs(db: Db, accountId: string): Promise<CreditInputs> {
  const grants = await db.$queryRawUnsafe<{ pot: Pot; credits: string; period: string }[]>(
    `SELECT pot, credits::text AS credits, period FROM credit_journal WHERE account_id = $1`,
    accountId,
  );
  const usage = await db.$queryRawUnsafe<{ period: string; credits: string }[]>(
    `SELECT to_char(day, 'YYYY-MM') AS period, sum(credits)::text AS credits FROM usage_daily WHERE account_id = $1 ` +
      `GROUP BY 1`,
    accountId,
  );
  return {
    grants: grants.map((g) => ({ pot: g.pot, credits: Number(g.credits), period: g.period })),
    usageByPeriod: new Map(usage.map((u) => [u.period, Number(u.credits)])),
  };
}

export function deriveCredits(inputs: CreditInputs, account: CreditAccountRow, period: string): DerivedCredits {
  return derivePots({ ...inputs, period, overageLimit: account.overageLimitCredits });
}

/** Whose balance the sweep looks at next: accounts in id order after `afterId`. */
export async function listCreditAccounts(db: Db, afterId: string, limit: number): Promise<CreditAccountRow[]> {
  const rows = await (db as PrismaClient).creditAccount.findMany({
    where: { accountId: { gt: afterId } },
    orderBy: { accountId: 'asc' },
    take: limit,
  });
  return rows.map(toAccount);
}

export async function markReconciled(db: Db, accountId: string, readAt: Date, now: Date): Promise<void> {
  // A batch applied after the balance was read keeps the account marked, so the next sweep looks again.
  await db.$executeRawUnsafe(
    `UPDATE credit_accounts SET needs_reconcile = (last_applied_at IS NOT NULL AND last_applied_at > ` +
      `$2::timestamptz), reconciled_at = $3::timestamptz WHERE account_id = $1`,
    accountId,
    readAt.toISOString(),
    now.toISOString(),
  );
}

/** Takes the account's publishing lock for this transaction, or says another replica holds it. */
export async function tryLockAccount(tx: Tx, accountId: string): Promise<boolean> {
  const [row] = await tx.$queryRawUnsafe<{ locked: boolean }[]>(
    `SELECT pg_try_advisory_xact_lock(hashtext('credits:' || $1)) AS locked`,
    accountId,
  );
  return row?.locked === true;
}
