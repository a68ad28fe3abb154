import { logLevel, type logCreator } from 'kafkajs';
import type { Logger } from '@sbc/logging';

/** Routes kafkajs' own log lines into our pino logger so they carry `service` and land in the same stream. */
export function kafkaLogCreator(logger: Logger): logCreator {
  return () =>
    ({ namespace, level, log }) => {
      const { message, timestamp: _timestamp, logger: _name, ...extra } = log;
      const fields = { kafka: namespace, ...extra };
      if (level === logLevel.ERROR) logger.error(fields, message);
      else if (level === logLevel.WARN) logger.warn(fields, message);
      else if (level === logLevel.INFO) logger.info(fields, message);
      else logger.debug(fields, message);
    };
}
