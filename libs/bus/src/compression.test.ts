import { createLogger } from '@sbc/logging';
import { CompressionTypes } from 'kafkajs';
import { registerKafkaCodecs } from './compression';
import { createKafkaProducer } from './kafka-producer';
import { FakeKafkaCluster } from './testing/fake-kafka';

// kafkajs's own record-batch encoder and decoder: the bytes a producer puts on the wire and a consumer reads back.
/* eslint-disable @typescript-eslint/no-require-imports */
const { RecordBatch: encodeRecordBatch } = require('kafkajs/src/protocol/recordBatch/v0') as {
  RecordBatch: (batch: object) => Promise<Encoder>;
};
const decodeRecordBatch = require('kafkajs/src/protocol/recordBatch/v0/decoder') as (
  decoder: unknown,
) => Promise<{ records: { key: Buffer; value: Buffer }[] }>;
const encodeRecord = require('kafkajs/src/protocol/recordBatch/record/v0') as (record: object) => unknown;
const Decoder = require('kafkajs/src/protocol/decoder') as new (buffer: Buffer) => { readInt8(): number };
/* eslint-enable @typescript-eslint/no-require-imports */
interface Encoder {
  buffer: Buffer;
}

const logger = createLogger({ service: 'bus-test', level: 'silent' });

/** kafkajs's batch as a fetch response carries it, decoded as its consumer does. */
async function roundTrip(compression: CompressionTypes, values: string[]): Promise<{ wire: Buffer; read: string[] }> {
  const records = values.map((value, offsetDelta) =>
    encodeRecord({ offsetDelta, key: Buffer.from('acct_1'), value: Buffer.from(value) }),
  );
  const wire = (await encodeRecordBatch({ compression, records, lastOffsetDelta: values.length - 1 })).buffer;
  const { records: decoded } = await decodeRecordBatch(new Decoder(wire));
  return { wire, read: decoded.map((record) => record.value.toString('utf8')) };
}

describe('lz4 compression of usage events', () => {
  it('a batch kafkajs compresses with lz4 decodes to the same records, and is smaller on the wire', async () => {
    registerKafkaCodecs();
    const values = Array.from({ length: 200 }, (_, i) => `{"event_id":"evt_${i}","account_id":"acct_1","tokens":42}`);
    const lz4 = await roundTrip(CompressionTypes.LZ4, values);
    const plain = await roundTrip(CompressionTypes.None, values);
    expect(lz4.read).toEqual(values);
    expect(lz4.wire.length).toBeLessThan(plain.wire.length / 3);
  });

  it('the producer sends lz4 by default and what KAFKA_COMPRESSION names otherwise', async () => {
    const cluster = new FakeKafkaCluster();
    for (const compression of [undefined, 'gzip', 'none'] as const) {
      const producer = createKafkaProducer(cluster.client(), { lingerMs: 1, logger, compression });
      producer.send('usage.events.v1', { key: 'acct_1', value: new TextEncoder().encode('evt_1') });
      await producer.flush();
      await producer.close();
    }
    expect(cluster.compressions).toEqual([CompressionTypes.LZ4, CompressionTypes.GZIP, CompressionTypes.None]);
  });
});
