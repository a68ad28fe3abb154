/**
 * Names of the pub/sub channels and bus topics that cross service boundaries (`<domain>.<event>.v<n>`).
 * Publisher and subscribers import the name from here so they cannot drift apart.
 */

/** Published by the account service with the hex SHA-256 of a revoked credential; every edge drops it. */
export const KEY_REVOKED_CHANNEL = 'account.key-revoked.v1';

/** Kafka topic of usage events (value: protobuf UsageEvent, key: account id). */
export const USAGE_EVENTS_TOPIC = 'usage.events.v1';
