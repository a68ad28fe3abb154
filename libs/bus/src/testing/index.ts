// Stand-ins for a Kafka cluster behind kafkajs, for tests of the bus and of the apps over it (no broker runs here).
export { FakeKafkaCluster, type ProduceFault, type StoredRecord } from './fake-kafka';
export { FakeKafkaAdmin } from './fake-kafka-admin';
