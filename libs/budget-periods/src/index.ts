export {
  currentPeriod,
  isTimeZone,
  localDate,
  MAX_ROLLING_DAYS,
  parseBudgetPeriod,
  type BudgetPeriod,
  type PeriodWindow,
} from './periods';
