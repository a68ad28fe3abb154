import { CompressionCodecs, CompressionTypes } from 'kafkajs';
import LZ4Codec from 'kafkajs-lz4';

/**
 * Producer compressions of usage events. kafkajs carries gzip itself; lz4 comes from `kafkajs-lz4` (its `lz4`
 * falls back to pure JavaScript where the native build is not there). lz4 is the default: usage events are
 * small and frequent, and lz4 costs a fraction of gzip's CPU on the edge for most of its saving on the wire.
 */
export const KAFKA_COMPRESSIONS = ['lz4', 'gzip', 'none'] as const;
export type KafkaCompression = (typeof KAFKA_COMPRESSIONS)[number];

const lz4Codec = new LZ4Codec().codec;

const COMPRESSION_TYPES: Record<KafkaCompression, CompressionTypes> = {
  lz4: CompressionTypes.LZ4,
  gzip: CompressionTypes.GZIP,
  none: CompressionTypes.None,
};

/**
 * Registers the lz4 codec in kafkajs's process-wide codec table, which both directions read: a producer to
 * compress, a consumer to read batches any producer compressed with lz4 (the Java client's, say). Without it
 * kafkajs fails such a fetch with KafkaJSNotImplemented. Idempotent; every Kafka producer and consumer calls it.
 */
export function registerKafkaCodecs(): void {
  CompressionCodecs[CompressionTypes.LZ4] = lz4Codec;
}

export function compressionType(compression: KafkaCompression): CompressionTypes {
  return COMPRESSION_TYPES[compression];
}
