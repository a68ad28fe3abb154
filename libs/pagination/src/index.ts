export {
  DEFAULT_PAGE_LIMIT,
  keysetRange,
  listEnvelope,
  mapPage,
  MAX_PAGE_LIMIT,
  pageOf,
  toPage,
  type KeysetRange,
  type ListEnvelope,
  type PageQuery,
} from './pagination';
