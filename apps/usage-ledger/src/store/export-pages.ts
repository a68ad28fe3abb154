import pg from 'pg';
import type { PrismaClient } from '../generated/prisma/client';

/** Under gRPC's default 4 MiB receive limit, with room to spare. */
const EXPORT_CHUNK_BYTES = 1 << 20;

/** A page of the export file: its bytes in chunks of EXPORT_CHUNK_BYTES (the last one shorter). */
export interface ExportPage {
  chunks: Buffer[];
  rows: number;
  /** The last row's event id: the keyset cursor after this page. */
  lastEventId: string | undefined;
}

/**
 * Reads one page of the export. `select` writes a statement whose rows are (line, event_id), given `bind`,
 * which puts a text value into it; `head` goes before the first line.
 */
export type ReadExportPage = (select: (bind: (value: string) => string) => string, head: string) => Promise<ExportPage>;

/**
 * The page reader for a ledger's database: COPY on PostgreSQL, where the driver's pool is at hand; Prisma on PGlite.
 */
export function exportPagesFor(database: { prisma: PrismaClient; pool?: pg.Pool }): ReadExportPage {
  return database.pool ? copyExportPages(database.pool) : prismaExportPages(database.prisma);
}

/** Pages through Prisma (PGlite, embedded): each line arrives as a string and the page is encoded at once. */
export function prismaExportPages(db: PrismaClient): ReadExportPage {
  return async (select, head) => {
    const params: string[] = [];
    const sql = select((value) => {
      params.push(value);
      return `$${params.length}`;
    });
    const rows = await db.$queryRawUnsafe<Array<{ line: string; event_id: string }>>(sql, ...params);
    let text = head;
    for (const row of rows) text += row.line;
    const bytes = Buffer.from(text);
    const chunks: Buffer[] = [];
    for (let at = 0; at < bytes.length; at += EXPORT_CHUNK_BYTES)
      chunks.push(bytes.subarray(at, at + EXPORT_CHUNK_BYTES));
    return { chunks, rows: rows.length, lastEventId: rows.at(-1)?.event_id };
  };
}

/**
 * Pages through `COPY (...) TO STDOUT (FORMAT binary)` on a connection of Prisma's own pool (PostgreSQL): each
 * line's bytes are copied from the wire into the page's chunks as they are, never decoded into a string, and
 * the connection goes back to the pool when the page ends, so an export holds one only while a page is read
 * and a caller who leaves mid-way leaves none behind. COPY takes no parameters: values are quoted literals.
 */
function copyExportPages(pool: pg.Pool): ReadExportPage {
  return async (select, head) => {
    const statement = `COPY (${select((value) => pg.escapeLiteral(value))}) TO STDOUT (FORMAT binary)`;
    const client = await pool.connect();
    // A checked-out connection has no error listener of the pool's; a broken socket must fail the page, not the
    // process.
    const ignore = () => undefined;
    client.on('error', ignore);
    try {
      const page = await new Promise<ExportPage>((resolve, reject) =>
        client.query(new CopyOutPage(statement, head, resolve, reject)),
      );
      client.removeListener('error', ignore);
      client.release();
      return page;
    } catch (error) {
      // The connection may be broken or mid-statement: the pool closes it rather than lend it again.
      client.release(error instanceof Error ? error : true);
      throw error;
    }
  };
}

/** `PGCOPY\n\xff\r\n\0`, then 32-bit flags and the length of a header extension. */
const COPY_SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
const COPY_HEADER_BYTES = COPY_SIGNATURE.length + 8;

/**
 * The client side of one COPY TO STDOUT in binary format, rows of (line, event_id). PostgreSQL sends each row
 * in its own CopyData message, the file header before the first row and the trailer (a field count of -1)
 * last. A message's bytes are only valid while it is handled (the protocol parser reuses its buffer), so the
 * line is copied out at once.
 */
class CopyOutPage implements pg.Submittable {
  private readonly chunks: Buffer[] = [];
  private chunk = Buffer.allocUnsafe(EXPORT_CHUNK_BYTES);
  private used = 0;
  private rows = 0;
  private lastEventId: string | undefined;
  private headerSeen = false;
  private trailerSeen = false;
  private failure: Error | undefined;
  private settled = false;

  constructor(
    private readonly statement: string,
    head: string,
    private readonly resolve: (page: ExportPage) => void,
    private readonly reject: (error: Error) => void,
  ) {
    const bytes = Buffer.from(head);
    this.append(bytes, 0, bytes.length);
  }

  submit(connection: pg.Connection): void {
    connection.query(this.statement);
  }

  handleCopyData(message: { chunk: Buffer }): void {
    if (this.failure) return;
    try {
      this.read(message.chunk);
    } catch (error) {
      this.failure = error instanceof Error ? error : new Error(String(error));
    }
  }

  /** pg calls this after the last row; the page is settled at ReadyForQuery, which follows it. */
  handleCommandComplete(): void {}

  handleReadyForQuery(): void {
    if (!this.failure && !this.trailerSeen) this.failure = new Error('COPY ended without its trailer');
    if (this.failure) return this.settle(this.failure);
    if (this.used > 0) this.chunks.push(this.chunk.subarray(0, this.used));
    this.settle(undefined);
  }

  handleError(error: Error): void {
    this.settle(error);
  }

  private settle(error: Error | undefined): void {
    if (this.settled) return;
    this.settled = true;
    if (error) this.reject(error);
    else this.resolve({ chunks: this.chunks, rows: this.rows, lastEventId: this.lastEventId });
  }

  private read(data: Buffer): void {
    let at = 0;
    if (!this.headerSeen) {
      if (
        data.length < COPY_HEADER_BYTES ||
        data.compare(COPY_SIGNATURE, 0, COPY_SIGNATURE.length, 0, COPY_SIGNATURE.length) !== 0
      )
        throw new Error('COPY data without the binary file header');
      at = COPY_HEADER_BYTES + data.readUInt32BE(COPY_SIGNATURE.length + 4);
      this.headerSeen = true;
    }
    while (at < data.length) {
      const fields = data.readInt16BE(at);
      if (fields === -1) {
        this.trailerSeen = true;
        return;
      }
      if (fields !== 2) throw new Error(`COPY row of ${fields} fields, expected 2`);
      const lineBytes = data.readInt32BE(at + 2);
      const lineAt = at + 6;
      const idBytes = data.readInt32BE(lineAt + lineBytes);
      const idAt = lineAt + lineBytes + 4;
      if (lineBytes < 0 || idBytes < 0 || idAt + idBytes > data.length)
        throw new Error('COPY row with a NULL or cut field');
      this.append(data, lineAt, lineAt + lineBytes);
      this.lastEventId = data.toString('utf8', idAt, idAt + idBytes);
      this.rows += 1;
      at = idAt + idBytes;
    }
  }

  /** Copies `data[from, to)` into the page, filling each chunk to EXPORT_CHUNK_BYTES before the next. */
  private append(data: Buffer, from: number, to: number): void {
    while (from < to) {
      if (this.used === EXPORT_CHUNK_BYTES) {
        this.chunks.push(this.chunk);
        this.chunk = Buffer.allocUnsafe(EXPORT_CHUNK_BYTES);
        this.used = 0;
      }
      const copied = data.copy(this.chunk, this.used, from, Math.min(to, from + EXPORT_CHUNK_BYTES - this.used));
      this.used += copied;
      from += copied;
    }
  }
}
