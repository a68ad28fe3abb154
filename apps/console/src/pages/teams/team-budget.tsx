import { useState, type FormEvent } from 'react';
import type { Team, TeamMember } from '../../api/types';
import { Dialog } from '../../ui/dialog';
import { browserTimeZone, dateTime } from '../../ui/format';
import { Section } from '../../ui/page';
import { ErrorState } from '../../ui/states';
import {
  budgetBody,
  budgetFormOf,
  budgetSummary,
  PERIOD_LABELS,
  type BudgetFormState,
  type BudgetView,
} from './budget-form';
import { canManage } from './team-rules';
import { useSetMemberBudget, useSetTeamBudget } from './use-teams';

function BudgetFields({
  form,
  onChange,
  maxCredits,
}: {
  form: BudgetFormState;
  onChange: (form: BudgetFormState) => void;
  /** A member's cap is at most the team's. */
  maxCredits?: number;
}) {
  const set = (patch: Partial<BudgetFormState>) => onChange({ ...form, ...patch });
  return (
    <div className="row">
      <label>
        Cap (credits)
        <input
          required
          type="number"
          min={1}
          max={maxCredits}
          step={1}
          inputMode="numeric"
          value={form.credits}
          onChange={(e) => set({ credits: e.target.value })}
        />
      </label>
      <label>
        Period
        <select value={form.period} onChange={(e) => set({ period: e.target.value as BudgetFormState['period'] })}>
          {Object.entries(PERIOD_LABELS).map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
      </label>
      {form.period === 'rolling_days' && (
        <label>
          Days (1 to 366)
          <input
            required
            type="number"
            min={1}
            max={366}
            step={1}
            inputMode="numeric"
            value={form.days}
            onChange={(e) => set({ days: e.target.value })}
          />
        </label>
      )}
      <label>
        Time zone
        <input value={form.timeZone} onChange={(e) => set({ timeZone: e.target.value })} placeholder="UTC" />
      </label>
    </div>
  );
}

/** What a budget has spent, and when its period starts again. */
function BudgetStatus({ budget }: { budget: BudgetView | null | undefined }) {
  if (!budget) return <>No budget</>;
  return (
    <>
      {budgetSummary(budget)}; resets {dateTime(budget.resets_at)} ({budget.time_zone})
    </>
  );
}

/** The team's own budget: what it has spent this period, and (owners and admins) a form to set or remove it. */
export function TeamBudget({ team }: { team: Team }) {
  const save = useSetTeamBudget();
  const [form, setForm] = useState(() => budgetFormOf(team.budget, browserTimeZone()));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate({ teamId: team.id, budget: budgetBody(form) });
  };
  return (
    <Section title="Budget">
      <p>
        <BudgetStatus budget={team.budget} />. A cap over the spend of every team key; each member can have a cap inside
        it.
      </p>
      {canManage(team.role) ? (
        <form onSubmit={submit} aria-label="Team budget">
          <BudgetFields form={form} onChange={(next) => (save.reset(), setForm(next))} />
          <div className="actions">
            <button type="submit" disabled={save.isPending}>
              Set budget
            </button>
            {team.budget && (
              <button
                type="button"
                className="danger"
                disabled={save.isPending}
                onClick={() => save.mutate({ teamId: team.id, budget: null })}
              >
                Remove budget
              </button>
            )}
          </div>
          {save.error && <ErrorState error={save.error} />}
        </form>
      ) : (
        <p>Only owners and admins set the team budget.</p>
      )}
    </Section>
  );
}

/** A member's budget in the members table, with an editor for owners and admins. */
export function MemberBudget({ team, member }: { team: Team; member: TeamMember }) {
  const save = useSetMemberBudget();
  const [form, setForm] = useState<BudgetFormState>();
  const who = member.email ?? member.user_id;
  const done = { onSuccess: () => setForm(undefined) };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (form) save.mutate({ teamId: team.id, userId: member.user_id, budget: budgetBody(form) }, done);
  };
  return (
    <>
      <BudgetStatus budget={member.budget} />{' '}
      {canManage(team.role) && (
        <button
          type="button"
          aria-label={`Budget of ${who}`}
          onClick={() => (
            save.reset(),
            setForm(budgetFormOf(member.budget, team.budget?.time_zone ?? browserTimeZone()))
          )}
        >
          Budget
        </button>
      )}
      <Dialog open={!!form} title={`Budget of ${who}`} onClose={() => setForm(undefined)}>
        {form && (
          <form onSubmit={submit}>
            <p>At most the team&apos;s cap{team.budget ? ` (${team.budget.credits} credits)` : ''}.</p>
            <BudgetFields
              form={form}
              maxCredits={team.budget?.credits}
              onChange={(next) => (save.reset(), setForm(next))}
            />
            {save.error && <ErrorState error={save.error} />}
            <div className="actions">
              <button type="button" onClick={() => setForm(undefined)}>
                Cancel
              </button>
              {member.budget && (
                <button
                  type="button"
                  className="danger"
                  disabled={save.isPending}
                  onClick={() => save.mutate({ teamId: team.id, userId: member.user_id, budget: null }, done)}
                >
                  Remove budget
                </button>
              )}
              <button type="submit" disabled={save.isPending}>
                Save budget
              </button>
            </div>
          </form>
        )}
      </Dialog>
    </>
  );
}
