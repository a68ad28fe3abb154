import { learnDocument, type ServiceDocument } from './document';
import { parseExchanges, parseObservationSet, type ObservationSet } from './observation';
import ledgerly from './observations/ledgerly.json';
import octoIssues from './observations/octo-issues.json';
import parcelpost from './observations/parcelpost.json';

/** The shipped services: recorded observation sets kept in the repo, checked against the schema at load. */
export const SERVICE_CATALOG: ReadonlyMap<string, ObservationSet> = new Map(
  [octoIssues, ledgerly, parcelpost].map(parseObservationSet).map((set) => [set.service.id, set]),
);

/**
 * A shipped service's observations with exchanges recorded later (by the runs service) added to them;
 * undefined for a service that is not shipped. Extra exchanges are validated like the shipped ones.
 */
export function mergeObservations(serviceId: string, extraExchanges: unknown = []): ObservationSet | undefined {
  const shipped = SERVICE_CATALOG.get(serviceId);
  if (!shipped) return undefined;
  return { service: shipped.service, exchanges: [...shipped.exchanges, ...parseExchanges(extraExchanges)] };
}

/** The learned document of a shipped service, with any extra exchanges merged in; undefined for an unknown id. */
export function learnServiceDocument(serviceId: string, extraExchanges: unknown = []): ServiceDocument | undefined {
  const set = mergeObservations(serviceId, extraExchanges);
  return set && learnDocument(set);
}

/** Every shipped service's learned document, by service id. */
export function learnShippedDocuments(): Map<string, ServiceDocument> {
  return new Map([...SERVICE_CATALOG].map(([id, set]) => [id, learnDocument(set)]));
}
