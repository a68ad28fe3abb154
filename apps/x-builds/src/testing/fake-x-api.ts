import express from 'express';
import { listen } from '@sbc/http';

/**
 * A stand-in for the X API v2 in tests: the mentions timeline of one account (newest first, `since_id`
 * exclusive, paged by `max_results` / `pagination_token`), image uploads and reply posts (with the media
 * they attach), with tokens checked and failures that can be scripted per call (429 with a reset time, 401,
 * 403, 5xx).
 */

interface FakeMention {
  id: string;
  text: string;
  author_id: string;
  conversation_id?: string;
  referenced_tweets?: { type: string; id: string }[];
}

interface FakeReply {
  id: string;
  text: string;
  in_reply_to_tweet_id: string;
  /** `media.media_ids` of the post, empty when it attached none. */
  media_ids: string[];
}

/** One `POST /2/media/upload` as received: the decoded bytes and what they were declared as. */
interface FakeUpload {
  id: string;
  media_category: string;
  media_type: string;
  bytes: Buffer;
}

interface ScriptedFailure {
  status: number;
  /** Epoch seconds sent as `x-rate-limit-reset`. */
  resetAt?: number;
}

export interface FakeXApi {
  url: string;
  readonly mentions: FakeMention[];
  readonly replies: FakeReply[];
  readonly uploads: FakeUpload[];
  /** The `since_id` of every mentions request, in order (undefined when none was sent). */
  readonly mentionRequests: (string | undefined)[];
  /** Newest id of all posts; mentions must be added with increasing ids. */
  mention(mention: Omit<FakeMention, 'id'> & { id?: string }): FakeMention;
  /** The next call of that kind fails as scripted. */
  failNext(call: Call, failure: ScriptedFailure): void;
  stop(): Promise<void>;
}

type Call = 'mentions' | 'upload' | 'reply';

export async function startFakeXApi(options: {
  accountId: string;
  bearerToken: string;
  userAccessToken: string;
}): Promise<FakeXApi> {
  const mentions: FakeMention[] = [];
  const replies: FakeReply[] = [];
  const uploads: FakeUpload[] = [];
  const mentionRequests: (string | undefined)[] = [];
  const failures: Record<Call, ScriptedFailure[]> = { mentions: [], upload: [], reply: [] };
  let nextId = 1_800_000_000_000_000_000n;
  const newId = () => String((nextId += 1n));

  const app = express();
  // Uploads carry the image in base64: a screenshot is a few hundred kilobytes.
  app.use(express.json({ limit: '8mb' }));
  const fail = (res: express.Response, failure: ScriptedFailure) => {
    if (failure.resetAt) res.setHeader('x-rate-limit-reset', String(failure.resetAt));
    const body =
      failure.status === 429
        ? { title: 'Too Many Requests', detail: 'Too Many Requests', type: 'about:blank', status: 429 }
        : { title: 'Refused', status: failure.status };
    res.status(failure.status).json(body);
  };

  app.get('/2/users/:id/mentions', (req, res) => {
    if (req.headers.authorization !== `Bearer ${options.bearerToken}`)
      return void res.status(401).json({ title: 'Unauthorized', status: 401 });
    if (req.params.id !== options.accountId) return void res.status(403).json({ title: 'Forbidden', status: 403 });
    const sinceId = typeof req.query.since_id === 'string' ? req.query.since_id : undefined;
    mentionRequests.push(sinceId);
    const failure = failures.mentions.shift();
    if (failure) return void fail(res, failure);
    const max = Math.min(100, Math.max(5, Number(req.query.max_results ?? 10)));
    const offset = typeof req.query.pagination_token === 'string' ? Number(req.query.pagination_token) : 0;
    const newer = mentions
      .filter((m) => sinceId === undefined || BigInt(m.id) > BigInt(sinceId))
      .sort((a, b) => (BigInt(b.id) > BigInt(a.id) ? 1 : -1));
    const page = newer.slice(offset, offset + max);
    const meta: Record<string, unknown> = { result_count: page.length };
    if (page.length > 0) Object.assign(meta, { newest_id: page[0]!.id, oldest_id: page.at(-1)!.id });
    if (offset + max < newer.length) meta.next_token = String(offset + max);
    res.json(page.length > 0 ? { data: page, meta } : { meta });
  });

  app.post('/2/media/upload', (req, res) => {
    if (req.headers.authorization !== `Bearer ${options.userAccessToken}`)
      return void res.status(401).json({ title: 'Unauthorized', status: 401 });
    const failure = failures.upload.shift();
    if (failure) return void fail(res, failure);
    const body = req.body as { media?: string; media_category?: string; media_type?: string };
    if (typeof body.media !== 'string' || !body.media_category)
      return void res.status(400).json({ title: 'Invalid Request', status: 400 });
    const upload = {
      id: newId(),
      media_category: body.media_category,
      media_type: body.media_type ?? '',
      bytes: Buffer.from(body.media, 'base64'),
    };
    uploads.push(upload);
    res.json({
      data: { id: upload.id, media_key: `3_${upload.id}`, size: upload.bytes.length, expires_after_secs: 86_400 },
    });
  });

  app.post('/2/tweets', (req, res) => {
    if (req.headers.authorization !== `Bearer ${options.userAccessToken}`)
      return void res.status(401).json({ title: 'Unauthorized', status: 401 });
    const failure = failures.reply.shift();
    if (failure) return void fail(res, failure);
    const body = req.body as {
      text?: string;
      reply?: { in_reply_to_tweet_id?: string };
      media?: { media_ids?: string[] };
    };
    const mediaIds = body.media?.media_ids ?? [];
    // X refuses a post that names media it never received.
    if (mediaIds.some((id) => !uploads.some((upload) => upload.id === id)))
      return void res.status(400).json({ title: 'Invalid Request', detail: 'unknown media id', status: 400 });
    const reply = {
      id: newId(),
      text: body.text ?? '',
      in_reply_to_tweet_id: body.reply?.in_reply_to_tweet_id ?? '',
      media_ids: mediaIds,
    };
    replies.push(reply);
    res.status(201).json({ data: { id: reply.id, text: reply.text } });
  });

  const server = await listen(app, { host: '127.0.0.1', port: 0 });
  return {
    url: server.url,
    mentions,
    replies,
    uploads,
    mentionRequests,
    mention(mention) {
      const added = { ...mention, id: mention.id ?? newId() };
      mentions.push(added);
      return added;
    },
    failNext(call, failure) {
      failures[call].push(failure);
    },
    stop: () => server.close(0),
  };
}
