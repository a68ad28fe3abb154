import {
  type CompressionTypes,
  KafkaJSConnectionError,
  KafkaJSNonRetriableError,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSProtocolError,
  KafkaJSRequestTimeoutError,
  type Admin,
  type Consumer,
  type ConsumerConfig,
  type ConsumerRunConfig,
  type Kafka,
  type Producer,
  type ProducerBatch,
  type ProducerConfig,
} from 'kafkajs';
import { FakeKafkaAdmin } from './fake-kafka-admin';

/** A record as the broker stored it. */
export interface StoredRecord {
  topic: string;
  partition: number;
  /** Its offset within its partition. */
  offset: number;
  key: string;
  value: Buffer;
  headers: Record<string, string>;
}

/**
 * What the broker does to the next produce request, as kafkajs 2.2.4 reports it to its caller once its own
 * retries are spent:
 * - `timeout-after-write`: the broker appended the batch, the reply never came (KafkaJSRequestTimeoutError,
 *   retriable, so it surfaces wrapped in KafkaJSNumberOfRetriesExceeded);
 * - `out-of-order-sequence`: code 45, not retriable (bailed out at once as KafkaJSNonRetriableError), and
 *   that producer instance fails the same way on every later request (kafkajs never resets its producer id).
 */
export type ProduceFault = 'timeout-after-write' | 'out-of-order-sequence';

/**
 * A stand-in for a Kafka cluster behind the kafkajs client, for unit tests of our producer: the part of the
 * kafkajs `Kafka` surface the bus uses, with kafkajs's own error classes and error shapes, and a broker that
 * can be taken down, brought back, or told to fault one request.
 */
export class FakeKafkaCluster {
  /** Every record ever appended, in append order (duplicates from retries included). */
  readonly log: StoredRecord[] = [];
  /** Heartbeats the consumers sent, all together. */
  heartbeats = 0;
  /** Times a consumer paused a partition. */
  pauses = 0;
  /** The options of every kafkajs producer created, oldest first. */
  readonly producerConfigs: ProducerConfig[] = [];
  /** The `acks` of every produce request received. */
  readonly acks: number[] = [];
  /** The `compression` of every produce request received. */
  readonly compressions: (CompressionTypes | undefined)[] = [];
  /** How many records each produce request carried, in order. */
  readonly requestSizes: number[] = [];
  /** Produce requests received, successful or not. */
  produceRequests = 0;
  /** Per consumer group and partition (`group/partition`), the offset of the next record it has not committed. */
  readonly committed = new Map<string, number>();
  /** The options of every kafkajs consumer created, oldest first. */
  readonly consumerConfigs: ConsumerConfig[] = [];
  /** Topics as the admin client sees them (created by `createTopics`, or by the broker's auto-create). */
  readonly topicAdmin: FakeKafkaAdmin;
  private readonly topicsExist: boolean;
  private readonly autoCreateTopics: boolean;

  /**
   * Each topic has `partitions` partitions; a record's is its key's (a stand-in for murmur2: stable per key).
   * By default every topic exists. With `topicsExist: false` a topic exists once the admin client created it, or
   * once a client that allows it (kafkajs's `allowAutoTopicCreation`, on unless turned off) touched it on a broker
   * with `autoCreateTopics` (`auto.create.topics.enable`, the broker's default): then with the broker's defaults,
   * 1 partition and 1 replica, as a real broker makes it.
   */
  constructor(
    readonly partitions = 1,
    options: { topicsExist?: boolean; autoCreateTopics?: boolean; brokers?: number } = {},
  ) {
    this.topicsExist = options.topicsExist ?? true;
    this.autoCreateTopics = options.autoCreateTopics ?? true;
    this.topicAdmin = new FakeKafkaAdmin(options.brokers ?? 1);
  }

  /** Whether a client may use `topic`, creating it with broker defaults when the client and broker allow it. */
  private reachTopic(topic: string, allowAutoTopicCreation: boolean | undefined): boolean {
    if (this.topicsExist || this.topicAdmin.topics.has(topic)) return true;
    if (allowAutoTopicCreation === false || !this.autoCreateTopics) return false;
    this.topicAdmin.topics.set(topic, { partitions: 1, replicationFactor: 1, configs: {} });
    return true;
  }

  /** Partitions of `topic`: the cluster's count, or what the topic was created with. */
  partitionsOf(topic: string): number {
    return this.topicAdmin.topics.get(topic)?.partitions ?? this.partitions;
  }

  partitionOf(key: string, topic?: string): number {
    let hash = 0;
    for (const char of key) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
    return hash % (topic ? this.partitionsOf(topic) : this.partitions);
  }

  /** The records of one partition of a topic, in offset order. */
  partitionLog(topic: string, partition: number): StoredRecord[] {
    return this.log.filter((r) => r.topic === topic && r.partition === partition);
  }

  /**
   * The part of kafkajs's admin client that reads offsets: each partition's high watermark
   * (`fetchTopicOffsets`), and a group's committed offsets (`fetchOffsets`, -1 where it committed none).
   */
  admin(): Pick<
    Admin,
    | 'connect'
    | 'disconnect'
    | 'fetchTopicOffsets'
    | 'fetchOffsets'
    | 'describeCluster'
    | 'createTopics'
    | 'fetchTopicMetadata'
    | 'describeConfigs'
  > {
    const partitionIds = Array.from({ length: this.partitions }, (_, partition) => partition);
    const topics = this.topicAdmin.client();
    const down = () => this.down;
    const unreachable = () => this.unreachable();
    const whileUp =
      <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
      async (...args: A): Promise<R> => {
        if (down()) throw unreachable();
        return call(...args);
      };
    return {
      describeCluster: whileUp(topics.describeCluster),
      createTopics: whileUp(topics.createTopics),
      fetchTopicMetadata: whileUp(topics.fetchTopicMetadata),
      describeConfigs: whileUp(topics.describeConfigs),
      connect: async () => undefined,
      disconnect: async () => undefined,
      fetchTopicOffsets: async (topic: string) =>
        partitionIds.map((partition) => {
          const high = String(this.partitionLog(topic, partition).length);
          return { partition, offset: high, high, low: '0' };
        }),
      fetchOffsets: async ({ groupId, topics }: { groupId: string; topics?: string[] }) =>
        (topics ?? []).map((topic) => ({
          topic,
          partitions: partitionIds.map((partition) => ({
            partition,
            offset: String(this.committed.get(`${groupId}/${partition}`) ?? -1),
            metadata: null,
          })),
        })),
    } as ReturnType<FakeKafkaCluster['admin']>;
  }
  private readonly consumers = new Set<FakeConsumer>();
  private down = false;
  private readonly faults: ProduceFault[] = [];
  private readonly fenced = new WeakSet<object>();

  /** For a consumer's subscribe: whether the topic is there (or made, when the client and broker allow it). */
  canSubscribe(topic: string, allowAutoTopicCreation: boolean | undefined): boolean {
    return this.reachTopic(topic, allowAutoTopicCreation);
  }

  /** Connections are refused until `bringUp`. */
  takeDown(): void {
    this.down = true;
  }

  bringUp(): void {
    this.down = false;
  }

  /** The next produce requests that reach a running broker fault this way, one fault each. */
  fault(...faults: ProduceFault[]): void {
    this.faults.push(...faults);
  }

  /** The client an app would build with `new Kafka(...)`. */
  client(): Kafka {
    return {
      producer: (config?: ProducerConfig) => this.newProducer(config ?? {}),
      consumer: (config: ConsumerConfig) => this.newConsumer(config),
      admin: () => this.admin(),
    } as unknown as Kafka;
  }

  /** kafkajs crashing every running consumer with a non-retriable error: disconnected, CRASH `restart: false`. */
  crashConsumers(error: Error): void {
    for (const consumer of [...this.consumers]) consumer.crash(error);
  }

  /** How many kafkajs consumers were ever created. */
  consumersCreated = 0;

  private newConsumer(config: ConsumerConfig): Consumer {
    this.consumersCreated++;
    this.consumerConfigs.push(config);
    const consumer = new FakeConsumer(this, config, (c) => this.consumers.delete(c));
    this.consumers.add(consumer);
    return consumer as unknown as Consumer;
  }

  /**
   * A client in a process that is killed (kill -9) by `kill()`: from then on none of its requests reaches the
   * broker and none gets an answer, as if the process were gone.
   */
  killableClient(): { client: Kafka; kill: () => void } {
    let killed = false;
    const client = {
      producer: (config?: ProducerConfig) => {
        const producer = this.newProducer(config ?? {});
        const never = () => new Promise<never>(() => undefined);
        return {
          connect: () => (killed ? never() : producer.connect()),
          disconnect: () => (killed ? never() : producer.disconnect()),
          sendBatch: (batch: ProducerBatch) => (killed ? never() : producer.sendBatch(batch)),
        };
      },
    } as unknown as Kafka;
    return { client, kill: () => (killed = true) };
  }

  private unreachable(): Error {
    const cause = new KafkaJSConnectionError('Connection error: connect ECONNREFUSED 127.0.0.1:9092', {
      broker: '127.0.0.1:9092',
    });
    return new KafkaJSNumberOfRetriesExceeded(cause, { retryCount: 5, retryTime: 1_000 });
  }

  private newProducer(config: ProducerConfig): Producer {
    this.producerConfigs.push(config);
    let connected = false;
    const handle = {} as Producer;
    Object.assign(handle, {
      connect: async () => {
        if (this.down) throw this.unreachable();
        connected = true;
      },
      disconnect: async () => {
        connected = false;
      },
      sendBatch: async (batch: ProducerBatch) => {
        if (!connected) throw new KafkaJSNonRetriableError('The producer is disconnected');
        this.produceRequests++;
        this.acks.push(batch.acks ?? -1);
        this.compressions.push(batch.compression);
        this.requestSizes.push((batch.topicMessages ?? []).reduce((n, t) => n + t.messages.length, 0));
        if (this.down) throw this.unreachable();
        const missing = (batch.topicMessages ?? []).find(
          ({ topic }) => !this.reachTopic(topic, config.allowAutoTopicCreation),
        );
        if (missing) throw unknownTopic();
        if (this.fenced.has(handle)) throw outOfOrderSequence();
        const fault = this.faults.shift();
        if (fault === 'out-of-order-sequence') {
          this.fenced.add(handle);
          throw outOfOrderSequence();
        }
        for (const { topic, messages } of batch.topicMessages ?? []) {
          for (const m of messages) {
            const headers = Object.fromEntries(Object.entries(m.headers ?? {}).map(([k, v]) => [k, String(v)]));
            const key = String(m.key);
            const partition = this.partitionOf(key, topic);
            const offset = this.partitionLog(topic, partition).length;
            this.log.push({ topic, partition, offset, key, value: Buffer.from(m.value as Buffer), headers });
          }
        }
        if (fault === 'timeout-after-write') {
          const cause = new KafkaJSRequestTimeoutError('Request Produce(key: 0, version: 7) timed out', {
            broker: '127.0.0.1:9092',
            clientId: 'gateway',
            correlationId: this.produceRequests,
            createdAt: Date.now(),
            sentAt: Date.now(),
            pendingDuration: 0,
          });
          throw new KafkaJSNumberOfRetriesExceeded(cause, { retryCount: 5, retryTime: 1_000 });
        }
        return [];
      },
    });
    return handle;
  }
}

/** A topic the broker does not have, as kafkajs reports it once its metadata retries are spent. */
function unknownTopic(): Error {
  const cause = new KafkaJSProtocolError({
    type: 'UNKNOWN_TOPIC_OR_PARTITION',
    code: 3,
    retriable: true,
    message: 'This server does not host this topic-partition',
  } as unknown as Error);
  return new KafkaJSNumberOfRetriesExceeded(cause, { retryCount: 5, retryTime: 1_000 });
}

/** Code 45 as kafkajs's produce path raises it: a protocol error, bailed out of the retrier as non-retriable. */
function outOfOrderSequence(): Error {
  const protocolError = new KafkaJSProtocolError({
    type: 'OUT_OF_ORDER_SEQUENCE_NUMBER',
    code: 45,
    retriable: false,
    message: 'The broker received an out of order sequence number',
  } as unknown as Error);
  return Object.assign(new KafkaJSNonRetriableError(protocolError), { cause: protocolError });
}

/**
 * One kafkajs consumer over the fake log: for each partition it does not hold paused, fetches what its group has
 * not committed, hands it to `eachBatch`, and commits the offsets resolved, as kafkajs does with autoCommit.
 * A paused partition is not fetched until resumed, and is then fetched again from its committed offset.
 */
class FakeConsumer {
  readonly events = { CRASH: 'consumer.crash' };
  private readonly listeners: ((event: unknown) => void)[] = [];
  private readonly paused = new Set<number>();
  private running = false;
  private topic = '';

  private readonly groupId: string;

  constructor(
    private readonly cluster: FakeKafkaCluster,
    private readonly config: ConsumerConfig,
    private readonly gone: (consumer: FakeConsumer) => void,
  ) {
    this.groupId = config.groupId;
  }

  on(_event: string, listener: (event: unknown) => void): () => void {
    this.listeners.push(listener);
    return () => undefined;
  }

  async connect(): Promise<void> {}

  async subscribe({ topics }: { topics: string[] }): Promise<void> {
    this.topic = topics[0]!;
    if (!this.cluster.canSubscribe(this.topic, this.config.allowAutoTopicCreation)) throw unknownTopic();
  }

  async run(config: ConsumerRunConfig): Promise<void> {
    this.running = true;
    void this.loop(config);
  }

  async disconnect(): Promise<void> {
    this.running = false;
    this.gone(this);
  }

  crash(error: Error): void {
    void this.disconnect();
    const event = { type: this.events.CRASH, payload: { error, groupId: this.groupId, restart: false } };
    for (const listener of this.listeners) listener(event);
  }

  private async loop(config: ConsumerRunConfig): Promise<void> {
    while (this.running) {
      let fetched = false;
      for (let partition = 0; partition < this.cluster.partitionsOf(this.topic) && this.running; partition++) {
        if (this.paused.has(partition)) continue;
        const committedKey = `${this.groupId}/${partition}`;
        const from = this.cluster.committed.get(committedKey) ?? 0;
        const records = this.cluster.partitionLog(this.topic, partition).slice(from);
        if (records.length === 0) continue;
        fetched = true;
        let resolved = from;
        const messages = records.map((r) => {
          return { offset: String(r.offset), key: Buffer.from(r.key), value: r.value, headers: r.headers };
        });
        const commit = () => {
          if (this.running) this.cluster.committed.set(committedKey, resolved);
        };
        await config.eachBatch!({
          batch: { topic: this.topic, partition, messages },
          resolveOffset: (offset: string) => (resolved = Number(offset) + 1),
          heartbeat: async () => void this.cluster.heartbeats++,
          pause: () => {
            this.cluster.pauses++;
            this.paused.add(partition);
            return () => this.paused.delete(partition);
          },
          commitOffsetsIfNecessary: async () => commit(),
          isRunning: () => this.running,
          isStale: () => false,
        } as never);
        commit();
      }
      if (!fetched) await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
}
