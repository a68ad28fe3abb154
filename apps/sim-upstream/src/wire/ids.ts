import { randomBytes } from 'node:crypto';

/** A vendor-style id: `chatcmpl-…`, `resp_…`, `msg_…`, `call_…`, `toolu_…`, `req_…`. */
export function newId(prefix: string): string {
  return prefix + randomBytes(12).toString('hex');
}

export const unixSeconds = (): number => Math.floor(Date.now() / 1000);
