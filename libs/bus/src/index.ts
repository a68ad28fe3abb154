export { backoffDelay, type BackoffOptions } from './backoff';
export { createBatchingProducer, type BatchingOptions, type SendBatch } from './batching-producer';
export { createLagAdmin, watchConsumerLag, type LagAdmin, type PartitionLag } from './consumer-lag';
export { createBus, createKafkaEventProducer, type Bus, type BusOptions } from './create-bus';
export { BusBufferFullError, BusClosedError, SpoolUnavailableError } from './errors';
export { openFileOutbox, type FileOutbox } from './file-outbox';
export { flushWithin } from './flush-within';
export { createInProcessBus, type InProcessBusOptions } from './in-process-bus';
export { createKafkaConsumer, type KafkaConsumerOptions } from './kafka-consumer';
export { KAFKA_COMPRESSIONS, type KafkaCompression } from './compression';
export { createKafkaProducer, type KafkaProducerOptions } from './kafka-producer';
export {
  awaitTopic,
  createTopicAdmin,
  DEFAULT_TOPIC_PARTITIONS,
  describeTopic,
  MIN_RETENTION_MS,
  provisionTopic,
  replicationFor,
  TopicShortfallError,
  topicShortfalls,
  type FoundTopic,
  type ProvisionedTopic,
  type TopicAdmin,
  type TopicSettings,
  type TopicWait,
} from './provision-topic';
export {
  createKafka,
  KAFKA_SASL_MECHANISMS,
  kafkaClientProblems,
  kafkaClientVars,
  toKafkaConnection,
  type KafkaClientOptions,
  type KafkaConnection,
} from './kafka-client';
export { prefixTopics } from './topic-prefix';
export { createSpoolingProducer, type SpoolOptions } from './spooling-producer';
export type {
  BatchHandler,
  BatchOutcome,
  DeadLetterSink,
  EventConsumer,
  EventHandler,
  EventProducer,
  FailureKind,
  IncomingMessage,
  MessageHeaders,
  OutgoingMessage,
  PoisonOptions,
  ProducerStats,
  SpoolStats,
  QueuedMessage,
  SubscribeBatchesOptions,
  SubscribeOptions,
  Subscription,
} from './types';
