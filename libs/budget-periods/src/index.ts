export {
  currentPeriod,
  isTimeZone,
  localDate,
  MAX_ROLLING_DAYS,
  parseBudgetPeriod,
  type BudgetPeriod,
  wallClockMs,
  type PeriodWindow,
} from './periods';
