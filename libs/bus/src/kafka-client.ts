import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { generateAuthToken } from 'aws-msk-iam-sasl-signer-js';
import { Kafka, logLevel, type KafkaConfig, type SASLOptions } from 'kafkajs';
import { z } from 'zod';
import type { Logger } from '@sbc/logging';
import { kafkaLogCreator } from './kafka-logger';

/**
 * How the edge and the ledger reach the brokers: plaintext on a private network, or TLS and SASL as managed
 * Kafka needs (Confluent Cloud, Aiven, Event Hubs: SASL/PLAIN or SCRAM over TLS; Amazon MSK: SCRAM or IAM).
 * Every option goes through kafkajs's own `ssl` and `sasl`; AWS MSK IAM signs an OAUTHBEARER token with AWS's
 * own signer (`aws-msk-iam-sasl-signer-js`) from the default AWS credential chain (IRSA, instance role, env).
 */
export const KAFKA_SASL_MECHANISMS = ['plain', 'scram-sha-256', 'scram-sha-512', 'aws-msk-iam'] as const;

/** The connection variables both apps read (spread into their config schemas). */
export const kafkaClientVars = {
  /** TLS to the brokers; default on when KAFKA_SASL_MECHANISM is set (a password never crosses in the clear). */
  KAFKA_TLS: z
    .enum(['true', 'false', '1', '0', 'yes', 'no'])
    .optional()
    .transform((value) => (value === undefined ? undefined : value === 'true' || value === '1' || value === 'yes')),
  /** PEM file of the CA that signed the brokers' certificates; unset: the system's CAs. */
  KAFKA_TLS_CA_FILE: z.string().optional(),
  /** PEM files of a client certificate and its key, for brokers that authenticate clients by TLS (mTLS). */
  KAFKA_TLS_CERT_FILE: z.string().optional(),
  KAFKA_TLS_KEY_FILE: z.string().optional(),
  KAFKA_SASL_MECHANISM: z.enum(KAFKA_SASL_MECHANISMS).optional(),
  KAFKA_SASL_USERNAME: z.string().optional(),
  KAFKA_SASL_PASSWORD: z.string().optional(),
  /** With KAFKA_SASL_MECHANISM=aws-msk-iam: the cluster's region (credentials come from the AWS default chain). */
  AWS_REGION: z.string().optional(),
};

type KafkaClientVars = z.output<z.ZodObject<typeof kafkaClientVars>>;

/** What an app's config holds about the connection: no file is read and no secret checked until `createKafka`. */
export interface KafkaConnection {
  tls?: { caFile?: string; certFile?: string; keyFile?: string };
  sasl?:
    | { mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512'; username: string; password: string }
    | { mechanism: 'aws-msk-iam'; region: string };
}

/** Problems with the connection variables, for the app schema's `superRefine`; each names its variable. */
export function kafkaClientProblems(vars: KafkaClientVars): { path: string; message: string }[] {
  const problems: { path: string; message: string }[] = [];
  const mechanism = vars.KAFKA_SASL_MECHANISM;
  if (mechanism && mechanism !== 'aws-msk-iam') {
    if (!vars.KAFKA_SASL_USERNAME) problems.push({ path: 'KAFKA_SASL_USERNAME', message: `needed by ${mechanism}` });
    if (!vars.KAFKA_SASL_PASSWORD) problems.push({ path: 'KAFKA_SASL_PASSWORD', message: `needed by ${mechanism}` });
  }
  if (mechanism === 'aws-msk-iam' && !vars.AWS_REGION)
    problems.push({ path: 'AWS_REGION', message: 'needed by aws-msk-iam (the MSK cluster region)' });
  if (mechanism && vars.KAFKA_TLS === false)
    problems.push({ path: 'KAFKA_TLS', message: 'is off while KAFKA_SASL_MECHANISM is set: SASL runs over TLS' });
  if (Boolean(vars.KAFKA_TLS_CERT_FILE) !== Boolean(vars.KAFKA_TLS_KEY_FILE))
    problems.push({ path: 'KAFKA_TLS_CERT_FILE', message: 'and KAFKA_TLS_KEY_FILE go together' });
  return problems;
}

/** The connection as the app's config keeps it (call after the schema accepted `vars`). */
export function toKafkaConnection(vars: KafkaClientVars): KafkaConnection {
  const mechanism = vars.KAFKA_SASL_MECHANISM;
  const tlsOn =
    vars.KAFKA_TLS ?? (mechanism !== undefined || Boolean(vars.KAFKA_TLS_CA_FILE ?? vars.KAFKA_TLS_CERT_FILE));
  const connection: KafkaConnection = {};
  if (tlsOn)
    connection.tls = {
      caFile: vars.KAFKA_TLS_CA_FILE,
      certFile: vars.KAFKA_TLS_CERT_FILE,
      keyFile: vars.KAFKA_TLS_KEY_FILE,
    };
  if (mechanism === 'aws-msk-iam') connection.sasl = { mechanism, region: vars.AWS_REGION! };
  else if (mechanism)
    connection.sasl = { mechanism, username: vars.KAFKA_SASL_USERNAME!, password: vars.KAFKA_SASL_PASSWORD! };
  return connection;
}

/** kafkajs's `ssl` option: true (system CAs), or the CA and client certificate read from their files now. */
export function kafkaSsl(tls: KafkaConnection['tls']): KafkaConfig['ssl'] {
  if (!tls) return undefined;
  if (!tls.caFile && !tls.certFile) return true;
  const read = (file: string, what: string) => {
    try {
      return readFileSync(file, 'utf8');
    } catch (error) {
      throw new Error(`cannot read ${what} ${file}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`);
    }
  };
  const options: ConnectionOptions = {};
  if (tls.caFile) options.ca = [read(tls.caFile, 'KAFKA_TLS_CA_FILE')];
  if (tls.certFile) options.cert = read(tls.certFile, 'KAFKA_TLS_CERT_FILE');
  if (tls.keyFile) options.key = read(tls.keyFile, 'KAFKA_TLS_KEY_FILE');
  return options;
}

/** kafkajs's `sasl` option. MSK IAM: a fresh signed token whenever kafkajs (re)authenticates a connection. */
export function kafkaSasl(sasl: KafkaConnection['sasl']): SASLOptions | undefined {
  if (!sasl) return undefined;
  if (sasl.mechanism === 'aws-msk-iam') {
    const { region } = sasl;
    return {
      mechanism: 'oauthbearer',
      oauthBearerProvider: async () => ({ value: (await generateAuthToken({ region })).token }),
    };
  }
  return { mechanism: sasl.mechanism, username: sasl.username, password: sasl.password };
}

export interface KafkaClientOptions {
  brokers: string[];
  clientId: string;
  logger: Logger;
  connection?: KafkaConnection;
}

/** The one way the apps build a kafkajs client: brokers, TLS and SASL, and kafkajs's logs through ours. */
export function createKafka(options: KafkaClientOptions): Kafka {
  const { connection = {} } = options;
  return new Kafka({
    clientId: options.clientId,
    brokers: options.brokers,
    ssl: kafkaSsl(connection.tls),
    sasl: kafkaSasl(connection.sasl),
    logLevel: logLevel.WARN,
    logCreator: kafkaLogCreator(options.logger),
  });
}
