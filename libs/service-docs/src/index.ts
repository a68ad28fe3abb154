export { learnServiceDocument, learnShippedDocuments, mergeObservations, SERVICE_CATALOG } from './catalog';
export { learnDocument, type Provenance, type ReplayOperation, type ServiceDocument } from './document';
export {
  Exchange,
  ObservationSet,
  parseExchanges,
  parseObservationSet,
  type ExchangeInput,
  type ObservationSetInput,
} from './observation';
