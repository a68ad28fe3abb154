import type { Request, Response } from 'express';
import type { XBuildsService } from '@sbc/proto/sbc/xbuilds/v1/xbuilds_pb';
import type { RpcClientOf } from '@sbc/rpc';

export interface ByteRange {
  start?: number;
  end?: number;
  suffixLength?: number;
}

/** Media may change only while their job is verified again (a fix round); revalidation by ETag is cheap. */
const CACHE_CONTROL = 'private, max-age=60';

/**
 * The single byte range a Range header asks for, or undefined to answer with the whole file: no header,
 * another unit, several ranges or a malformed one are all served whole, as HTTP allows.
 */
export function parseRange(header: string | undefined): ByteRange | undefined {
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header ?? '');
  if (!match) return undefined;
  const [, first, last] = match;
  if (first === '' && last === '') return undefined;
  if (first === '') return { suffixLength: Number(last) };
  const start = Number(first);
  if (last === '') return { start };
  const end = Number(last);
  return end < start ? undefined : { start, end };
}

/** The entity tags of an If-None-Match header (`*` included as is). */
export function entityTags(header: string | undefined): string[] {
  return (header ?? '')
    .split(',')
    .map((tag) => tag.trim())
    .filter(Boolean);
}

const toBigInt = (value: number | undefined) => (value === undefined ? undefined : BigInt(value));

/**
 * Answers a media route from the builds service: 200 with the file, 206 with the range asked for (clips),
 * 304 when the caller's ETag is current, 416 when the range starts past the end. The builds service cuts the
 * range and compares the tags; only what is sent crosses gRPC.
 */
export async function sendMedia(
  xbuilds: RpcClientOf<typeof XBuildsService>,
  input: { userId: string; id: string; kind: string; ranges: boolean; requestId: string; req: Request; res: Response },
): Promise<void> {
  const { req, res } = input;
  const range = input.ranges ? parseRange(req.headers.range) : undefined;
  const ifRange = input.ranges && typeof req.headers['if-range'] === 'string' ? req.headers['if-range'] : undefined;
  const media = await xbuilds.getJobMedia(
    {
      userId: input.userId,
      id: input.id,
      kind: input.kind,
      range: range
        ? { start: toBigInt(range.start), end: toBigInt(range.end), suffixLength: toBigInt(range.suffixLength) }
        : undefined,
      ifRange,
      ifNoneMatch: entityTags(req.headers['if-none-match']),
    },
    { requestId: input.requestId },
  );
  res
    .setHeader('etag', media.etag)
    .setHeader('cache-control', CACHE_CONTROL)
    .setHeader('x-content-type-options', 'nosniff');
  if (input.ranges) res.setHeader('accept-ranges', 'bytes');
  if (media.notModified) {
    res.status(304).end();
    return;
  }
  if (media.rangeUnsatisfiable) {
    res.status(416).setHeader('content-range', `bytes */${media.totalSize}`).end();
    return;
  }
  const body = Buffer.from(media.body);
  res.setHeader('content-type', media.contentType).setHeader('content-length', body.length);
  if (media.rangeStart !== undefined) {
    res
      .status(206)
      .setHeader(
        'content-range',
        `bytes ${media.rangeStart}-${media.rangeStart + BigInt(body.length) - 1n}/${media.totalSize}`,
      );
  } else {
    res.status(200);
  }
  res.end(body);
}
