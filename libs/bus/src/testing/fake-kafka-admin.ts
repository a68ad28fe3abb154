import { KafkaJSAggregateError, KafkaJSProtocolError, type Admin, type ITopicConfig } from 'kafkajs';

interface FakeTopic {
  partitions: number;
  replicationFactor: number;
  configs: Record<string, string>;
}

function protocolError(type: string, code: number, message: string): KafkaJSProtocolError {
  return new KafkaJSProtocolError({ type, code, retriable: false, message } as unknown as Error);
}

/**
 * A stand-in for a Kafka cluster behind kafkajs 2.2.4's admin client, for unit tests of topic provisioning:
 * `createTopics` resolves false for a topic that exists (kafkajs swallows TOPIC_ALREADY_EXISTS) and fails as
 * the broker does on a replication factor above the broker count; `fetchTopicMetadata` of a missing topic
 * raises UNKNOWN_TOPIC_OR_PARTITION (the admin client never auto-creates).
 */
export class FakeKafkaAdmin {
  readonly topics = new Map<string, FakeTopic>();
  readonly created: ITopicConfig[] = [];
  connected = false;

  constructor(readonly brokers: number) {}

  /** A topic as an operator (or broker auto-create) left it. */
  withTopic(name: string, topic: FakeTopic): this {
    this.topics.set(name, topic);
    return this;
  }

  client(): Pick<
    Admin,
    'connect' | 'disconnect' | 'describeCluster' | 'createTopics' | 'fetchTopicMetadata' | 'describeConfigs'
  > {
    return {
      connect: async () => void (this.connected = true),
      disconnect: async () => void (this.connected = false),
      describeCluster: async () => ({
        brokers: Array.from({ length: this.brokers }, (_, nodeId) => ({ nodeId, host: `b${nodeId}`, port: 9092 })),
        controller: 0,
        clusterId: 'fake',
      }),
      createTopics: async ({ topics }) => {
        const errors = topics.flatMap((topic) => {
          if (this.topics.has(topic.topic))
            return [protocolError('TOPIC_ALREADY_EXISTS', 36, `Topic '${topic.topic}' already exists.`)];
          if ((topic.replicationFactor ?? 1) > this.brokers)
            return [protocolError('INVALID_REPLICATION_FACTOR', 38, 'Replication-factor is invalid')];
          return [];
        });
        if (errors.length > 0) {
          if (errors.every((error) => error.type === 'TOPIC_ALREADY_EXISTS')) return false;
          throw new KafkaJSAggregateError('Topic creation errors', errors);
        }
        for (const topic of topics) {
          this.created.push(topic);
          const configs = Object.fromEntries((topic.configEntries ?? []).map((entry) => [entry.name, entry.value]));
          this.topics.set(topic.topic, {
            partitions: topic.numPartitions ?? 1,
            replicationFactor: topic.replicationFactor ?? 1,
            configs,
          });
        }
        return true;
      },
      fetchTopicMetadata: async (options) => {
        const names = options?.topics ?? [...this.topics.keys()];
        const missing = names.find((name) => !this.topics.has(name));
        if (missing)
          throw protocolError('UNKNOWN_TOPIC_OR_PARTITION', 3, 'This server does not host this topic-partition');
        return {
          topics: names.map((name) => {
            const topic = this.topics.get(name)!;
            return {
              name,
              partitions: Array.from({ length: topic.partitions }, (_, partitionId) => ({
                partitionErrorCode: 0,
                partitionId,
                leader: 0,
                replicas: Array.from({ length: topic.replicationFactor }, (_, id) => id),
                isr: Array.from({ length: topic.replicationFactor }, (_, id) => id),
                offlineReplicas: [],
              })),
            };
          }),
        };
      },
      describeConfigs: async ({ resources }) => ({
        throttleTime: 0,
        resources: resources.map((resource) => {
          const configs = {
            'min.insync.replicas': '1',
            'retention.ms': '604800000',
            ...this.topics.get(resource.name)?.configs,
          };
          return {
            errorCode: 0,
            errorMessage: '',
            resourceName: resource.name,
            resourceType: resource.type,
            configEntries: (resource.configNames ?? Object.keys(configs)).map((configName) => ({
              configName,
              configValue: configs[configName as keyof typeof configs],
              isDefault: false,
              configSource: 1,
              isSensitive: false,
              readOnly: false,
              configSynonyms: [],
            })),
          };
        }),
      }),
    } as ReturnType<FakeKafkaAdmin['client']>;
  }
}
