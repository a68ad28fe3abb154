import type { FailureKind } from '@sbc/bus';

// SQLSTATE classes (PostgreSQL appendix A). 22 data exception, 23 integrity constraint violation: the row
// itself is refused and will be every time. 08 connection exception, 53 insufficient resources, 57 operator
// intervention (shutdown), 40 transaction rollback (serialization, deadlock): the database, not the row.
const DATA_CLASSES = new Set(['22', '23']);
const TRANSIENT_CLASSES = new Set(['08', '53', '57', '40']);
// Node socket errors, and Prisma's "cannot reach / connection closed / pool timed out" codes.
const TRANSIENT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'P1001',
  'P1002',
  'P1008',
  'P1017',
  'P2024',
  // A transaction Prisma could not start, or closed, within its bounds (a connection never came, a blackhole).
  'P2028',
]);
// pg-pool's and pg's own timeouts carry no code, only these messages (LEDGER_DB_CONNECT_TIMEOUT_MS).
const TRANSIENT_MESSAGES =
  /timeout exceeded when trying to connect|Connection terminated (due to connection timeout|unexpectedly)/;
// Driver adapter error kinds that mean the connection, not the statement.
const TRANSIENT_KINDS = new Set([
  'DatabaseNotReachable',
  'DatabaseDoesNotExist',
  'ConnectionClosed',
  'SocketTimeout',
  'TooManyConnections',
  'TransactionWriteConflict',
]);
// Five characters; Prisma's own codes (P1000…P6999) look alike but are not SQLSTATEs (PL/pgSQL's are P0xxx).
const SQLSTATE = /^(?!P[1-9])[0-9A-Z]{5}$/;

/**
 * How a failure to apply usage events looks to the bus's poison handling. Prisma wraps the driver's error in
 * layers that differ between PostgreSQL and PGlite and between versions, so the codes are looked for at any
 * depth of `cause` / `meta` rather than at one known path.
 */
export function classifyLedgerFailure(error: unknown): FailureKind {
  const codes = collectCodes(error, 0);
  if (messagesOf(error, 0).some((message) => TRANSIENT_MESSAGES.test(message))) return 'transient';
  if (
    codes.some(
      (code) =>
        TRANSIENT_CODES.has(code) ||
        TRANSIENT_KINDS.has(code) ||
        (SQLSTATE.test(code) && TRANSIENT_CLASSES.has(code.slice(0, 2))),
    )
  )
    return 'transient';
  if (codes.some((code) => SQLSTATE.test(code) && DATA_CLASSES.has(code.slice(0, 2)))) return 'data';
  return 'unknown';
}

/**
 * Every `code`, `originalCode` and `kind` string found in the error and what it wraps; the message's "Code: `xxxxx`"
 * too.
 */
function collectCodes(value: unknown, depth: number): string[] {
  if (depth > 5 || value === null || typeof value !== 'object') return [];
  const record = value as Record<string, unknown>;
  const codes: string[] = [];
  for (const name of ['code', 'originalCode', 'kind']) if (typeof record[name] === 'string') codes.push(record[name]);
  if (typeof record.message === 'string') {
    const quoted = /Code: `([0-9A-Z]{5})`/.exec(record.message);
    if (quoted) codes.push(quoted[1]!);
  }
  for (const name of ['cause', 'meta', 'driverAdapterError']) codes.push(...collectCodes(record[name], depth + 1));
  return codes;
}

/** The messages of the error and of what it wraps. */
function messagesOf(value: unknown, depth: number): string[] {
  if (depth > 5 || value === null || typeof value !== 'object') return [];
  const record = value as Record<string, unknown>;
  const own = typeof record.message === 'string' ? [record.message] : [];
  return [...own, ...['cause', 'meta', 'driverAdapterError'].flatMap((name) => messagesOf(record[name], depth + 1))];
}

/** The error as one line for the dead-letter table: its SQLSTATE or code when it has one, and its message. */
export function describeFailure(error: unknown): string {
  // Prisma's messages span several lines; one line keeps the table and the operator's listing readable.
  const message = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ').trim();
  const code = collectCodes(error, 0).find((c) => SQLSTATE.test(c));
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}
