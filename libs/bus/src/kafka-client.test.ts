import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { kafkaClientProblems, kafkaClientVars, kafkaSasl, kafkaSsl, toKafkaConnection } from './kafka-client';

// Finding 5 of issue 53: managed Kafka needs TLS and SASL, from configuration, through kafkajs's own options.

const schema = z.object(kafkaClientVars);
const connectionOf = (env: Record<string, string>) => {
  const vars = schema.parse(env);
  return { problems: kafkaClientProblems(vars), connection: toKafkaConnection(vars) };
};

describe('the Kafka connection from configuration', () => {
  it('is plaintext with nothing set, as on a private network', () => {
    expect(connectionOf({})).toEqual({ problems: [], connection: {} });
  });

  it.each(['plain', 'scram-sha-256', 'scram-sha-512'] as const)(
    'SASL %s with a username and password, over TLS by default',
    (mechanism) => {
      const { problems, connection } = connectionOf({
        KAFKA_SASL_MECHANISM: mechanism,
        KAFKA_SASL_USERNAME: 'key',
        KAFKA_SASL_PASSWORD: 'secret',
      });
      expect(problems).toEqual([]);
      expect(kafkaSsl(connection.tls)).toBe(true);
      expect(kafkaSasl(connection.sasl)).toEqual({ mechanism, username: 'key', password: 'secret' });
    },
  );

  it('AWS MSK IAM signs an OAUTHBEARER token for the region', () => {
    const { problems, connection } = connectionOf({ KAFKA_SASL_MECHANISM: 'aws-msk-iam', AWS_REGION: 'eu-west-1' });
    expect(problems).toEqual([]);
    expect(kafkaSasl(connection.sasl)).toEqual({ mechanism: 'oauthbearer', oauthBearerProvider: expect.any(Function) });
  });

  it('names what is missing, never a value: credentials, region, TLS off under SASL, half a client cert', () => {
    expect(connectionOf({ KAFKA_SASL_MECHANISM: 'scram-sha-512', KAFKA_SASL_PASSWORD: 'hunter2' }).problems).toEqual([
      { path: 'KAFKA_SASL_USERNAME', message: 'needed by scram-sha-512' },
    ]);
    expect(connectionOf({ KAFKA_SASL_MECHANISM: 'aws-msk-iam' }).problems.map((p) => p.path)).toEqual(['AWS_REGION']);
    const off = connectionOf({
      KAFKA_SASL_MECHANISM: 'plain',
      KAFKA_SASL_USERNAME: 'u',
      KAFKA_SASL_PASSWORD: 'pw',
      KAFKA_TLS: 'false',
    });
    expect(off.problems.map((p) => p.path)).toEqual(['KAFKA_TLS']);
    expect(JSON.stringify(off.problems)).not.toContain('pw');
    expect(connectionOf({ KAFKA_TLS_CERT_FILE: '/c.pem' }).problems.map((p) => p.path)).toEqual([
      'KAFKA_TLS_CERT_FILE',
    ]);
  });

  it('reads a private CA and a client certificate for TLS (mTLS), and says which file it cannot read', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sbc-kafka-tls-'));
    try {
      for (const name of ['ca.pem', 'cert.pem', 'key.pem']) writeFileSync(path.join(dir, name), `${name} contents`);
      const { connection } = connectionOf({
        KAFKA_TLS_CA_FILE: path.join(dir, 'ca.pem'),
        KAFKA_TLS_CERT_FILE: path.join(dir, 'cert.pem'),
        KAFKA_TLS_KEY_FILE: path.join(dir, 'key.pem'),
      });
      expect(kafkaSsl(connection.tls)).toEqual({
        ca: ['ca.pem contents'],
        cert: 'cert.pem contents',
        key: 'key.pem contents',
      });
      expect(() => kafkaSsl({ caFile: path.join(dir, 'missing.pem') })).toThrow(
        /KAFKA_TLS_CA_FILE .*missing\.pem: ENOENT/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
