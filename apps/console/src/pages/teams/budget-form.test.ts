import { budgetBody, budgetFormOf, budgetSummary, type BudgetView } from './budget-form';

const view = (patch: Partial<BudgetView> = {}): BudgetView => ({
  credits: 10,
  period: 'weekly',
  time_zone: 'Europe/Paris',
  spent: 3.25,
  period_start: '2026-11-22T23:00:00.000Z',
  resets_at: '2026-11-29T23:00:00.000Z',
  ...patch,
});

describe('the budget form', () => {
  it('starts blank in the browser zone, or from the budget that is set', () => {
    expect(budgetFormOf(null, 'Asia/Tokyo')).toMatchObject({ credits: '', timeZone: 'Asia/Tokyo' });
    expect(budgetFormOf(view({ period: 'rolling_days:14' }), 'UTC')).toEqual({
      credits: '10',
      period: 'rolling_days',
      days: '14',
      timeZone: 'Europe/Paris',
    });
  });

  it('sends a rolling period as rolling_days:N and a blank zone as UTC', () => {
    expect(budgetBody({ credits: '25', period: 'rolling_days', days: ' 7 ', timeZone: '' })).toEqual({
      credits: 25,
      period: 'rolling_days:7',
      time_zone: 'UTC',
    });
    expect(budgetBody({ credits: '5', period: 'daily', days: '30', timeZone: 'America/Chicago' }).period).toBe('daily');
  });

  it('says what is spent of what, in the period', () => {
    expect(budgetSummary(view())).toBe('3.25 of 10 credits spent this week');
    expect(budgetSummary(view({ period: 'rolling_days:30', spent: 0 }))).toBe(
      '0 of 10 credits spent this 30-day period',
    );
  });
});
