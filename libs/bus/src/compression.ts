// lz4js ships no types. Its declaration is an ambient module, which only a reference brings into every project
// that compiles this file.
// eslint-disable-next-line @typescript-eslint/triple-slash-reference
/// <reference path="./lz4js.d.ts" />
import { CompressionCodecs, CompressionTypes } from 'kafkajs';
import { compress as lz4Compress, decompress as lz4Decompress } from 'lz4js';

/**
 * Producer compressions of usage events. kafkajs carries gzip itself; lz4 is `lz4js`, pure JavaScript, behind
 * kafkajs's codec interface (the codec packages built for kafkajs wrap a native addon, which would tie
 * node_modules to the Node version that installed it, and CI tests on another). lz4 is the default: usage
 * events are small and frequent, and lz4 costs a fraction of gzip's CPU on the edge for most of its saving on
 * the wire. lz4js writes the LZ4 frame format Kafka specifies, one block per batch (its blocks are 4 MiB, a
 * batch is far smaller), and reads the frames other clients write.
 */
export const KAFKA_COMPRESSIONS = ['lz4', 'gzip', 'none'] as const;
export type KafkaCompression = (typeof KAFKA_COMPRESSIONS)[number];

const lz4Codec = () => ({
  compress: async (encoder: { buffer: Buffer }): Promise<Buffer> => Buffer.from(lz4Compress(encoder.buffer)),
  decompress: async (buffer: Buffer): Promise<Buffer> => Buffer.from(lz4Decompress(buffer)),
});

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
