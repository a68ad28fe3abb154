/**
 * The X API v2 calls the lane makes: the mentions timeline of its own account (app-only bearer token), a
 * media upload (the app's screenshot) and a reply post carrying it (user-context token with tweet.write and
 * media.write). Failures come back as data, because each status means something different to the poller
 * (429: wait for the reset; 401/403: pause).
 */

export interface Mention {
  id: string;
  text: string;
  author_id: string;
  conversation_id?: string;
  referenced_tweets?: { type: string; id: string }[];
}

export type XFailure = { ok: false; status: number; resetAt?: Date; detail: string };

export type MentionsPage = { ok: true; mentions: Mention[]; newestId?: string; nextToken?: string } | XFailure;

export type PostResult = { ok: true; id: string } | XFailure;

export type UploadResult = { ok: true; mediaId: string } | XFailure;

export interface XClientOptions {
  baseUrl: string;
  bearerToken: string;
  userAccessToken?: string;
  accountId: string;
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 15_000;

function resetOf(res: Response): Date | undefined {
  const reset = Number(res.headers.get('x-rate-limit-reset'));
  return Number.isFinite(reset) && reset > 0 ? new Date(reset * 1000) : undefined;
}

async function failure(res: Response): Promise<XFailure> {
  const text = await res.text().catch(() => '');
  return { ok: false, status: res.status, resetAt: resetOf(res), detail: text.slice(0, 300) };
}

export function createXClient(options: XClientOptions) {
  const timeout = () => AbortSignal.timeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  return {
    async mentions(sinceId: string | undefined, paginationToken: string | undefined): Promise<MentionsPage> {
      const url = new URL(`${options.baseUrl}/2/users/${options.accountId}/mentions`);
      url.searchParams.set('max_results', '100');
      url.searchParams.set('expansions', 'author_id');
      url.searchParams.set('tweet.fields', 'author_id,conversation_id,created_at,referenced_tweets');
      if (sinceId) url.searchParams.set('since_id', sinceId);
      if (paginationToken) url.searchParams.set('pagination_token', paginationToken);
      let res: Response;
      try {
        res = await fetch(url, { headers: { authorization: `Bearer ${options.bearerToken}` }, signal: timeout() });
      } catch (error) {
        return { ok: false, status: 0, detail: (error as Error).message };
      }
      if (!res.ok) return failure(res);
      const body = (await res.json()) as { data?: Mention[]; meta?: { newest_id?: string; next_token?: string } };
      return { ok: true, mentions: body.data ?? [], newestId: body.meta?.newest_id, nextToken: body.meta?.next_token };
    },

    /** A one-shot image upload (`POST /2/media/upload`, JSON with the bytes in base64); images need no chunking. */
    async uploadImage(image: Uint8Array, mediaType: string): Promise<UploadResult> {
      let res: Response;
      try {
        res = await fetch(`${options.baseUrl}/2/media/upload`, {
          method: 'POST',
          headers: { authorization: `Bearer ${options.userAccessToken}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            media: Buffer.from(image).toString('base64'),
            media_category: 'tweet_image',
            media_type: mediaType,
          }),
          signal: timeout(),
        });
      } catch (error) {
        return { ok: false, status: 0, detail: (error as Error).message };
      }
      if (!res.ok) return failure(res);
      const body = (await res.json()) as { data?: { id?: string } };
      return body.data?.id
        ? { ok: true, mediaId: body.data.id }
        : { ok: false, status: res.status, detail: 'X answered without a media id' };
    },

    async reply(text: string, inReplyTo: string, mediaIds: string[] = []): Promise<PostResult> {
      let res: Response;
      try {
        res = await fetch(`${options.baseUrl}/2/tweets`, {
          method: 'POST',
          headers: { authorization: `Bearer ${options.userAccessToken}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            text,
            reply: { in_reply_to_tweet_id: inReplyTo },
            ...(mediaIds.length > 0 ? { media: { media_ids: mediaIds } } : {}),
          }),
          signal: timeout(),
        });
      } catch (error) {
        return { ok: false, status: 0, detail: (error as Error).message };
      }
      if (!res.ok) return failure(res);
      const body = (await res.json()) as { data?: { id?: string } };
      return body.data?.id
        ? { ok: true, id: body.data.id }
        : { ok: false, status: res.status, detail: 'X answered without a post id' };
    },
  };
}

export type XClient = ReturnType<typeof createXClient>;
