import OpenAI, { toFile } from 'openai';
import { rejectionOf } from '@sbc/testing';
import { openAiFor, startStack, type HouseSpec, type RunsStack } from '../support/stack';
import { teamFixtures } from '../support/teams.harness';

/**
 * Files through the edge with the official `openai` SDK (docs/batches.md): uploaded as multipart, kept by the
 * runs service in 1 MiB chunks, listed, read back byte for byte and deleted, per account; a batch input file is
 * checked line by line on upload; the per-file limit is 413 and the account quota 400, both naming `file`.
 */

/** Small bounds, so both are reached with small files (FILES_MAX_BYTES, FILES_QUOTA_BYTES_PER_ACCOUNT). */
const MAX_FILE_BYTES = 3 * 1024 * 1024;
const QUOTA_BYTES = 5 * 1024 * 1024;

const house = (simUrl: string): HouseSpec => ({
  house: [{ dialect: 'openai', base_url: `${simUrl}/v1`, model: 'sim-large' }],
});

let stack: RunsStack;
let teams: ReturnType<typeof teamFixtures>;

beforeAll(async () => {
  stack = await startStack({
    label: 'files',
    house,
    runs: {
      env: {
        RUNS_WORKERS: '0',
        FILES_MAX_BYTES: String(MAX_FILE_BYTES),
        FILES_QUOTA_BYTES_PER_ACCOUNT: String(QUOTA_BYTES),
      },
    },
    edgeEnv: { RATE_LIMIT_PER_MINUTE: '100000' },
  });
  teams = teamFixtures(stack);
}, 90_000);

afterAll(async () => {
  await stack?.stop();
});

async function account() {
  const user = await teams.user();
  return { user, openai: openAiFor(stack.edge.url, user.key) };
}

const line = (customId: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    custom_id: customId,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model: 'house', messages: [{ role: 'user', content: `Say ${customId}` }] },
    ...extra,
  });

/** Bytes that are not text and not one repeated value, so a chunk mixed up or dropped shows. */
function patterned(bytes: number): Buffer {
  const out = Buffer.alloc(bytes);
  for (let at = 0; at < bytes; at += 1) out[at] = (at * 7919 + (at >> 12)) & 0xff;
  return out;
}

describe('upload, list, read back, delete', () => {
  it('a batch input file is kept as uploaded and read back whole', async () => {
    const { openai } = await account();
    const text = `${line('a')}\n${line('b')}\n`;
    const file = await openai.files.create({ file: await toFile(Buffer.from(text), 'lines.jsonl'), purpose: 'batch' });
    expect(file).toMatchObject({
      id: expect.stringMatching(/^file-[0-9A-Z]{26}$/),
      object: 'file',
      bytes: Buffer.byteLength(text),
      filename: 'lines.jsonl',
      purpose: 'batch',
      status: 'processed',
    });
    expect(Math.abs(file.created_at - Date.now() / 1000)).toBeLessThan(60);
    expect(await openai.files.retrieve(file.id)).toMatchObject({ id: file.id, bytes: file.bytes });
    expect(await (await openai.files.content(file.id)).text()).toBe(text);
  });

  it('a file of several chunks (user_data, not text) reads back byte for byte', async () => {
    const { openai } = await account();
    const bytes = patterned(2 * 1024 * 1024 + 12_345);
    const file = await openai.files.create({ file: await toFile(bytes, 'data.bin'), purpose: 'user_data' });
    expect(file.bytes).toBe(bytes.length);
    const back = Buffer.from(await (await openai.files.content(file.id)).arrayBuffer());
    expect(back.equals(bytes)).toBe(true);
  });

  it('lists newest first, pages by `after`, filters by purpose; a deleted file is gone', async () => {
    const { openai } = await account();
    const upload = async (name: string, purpose: 'batch' | 'user_data') =>
      openai.files.create({ file: await toFile(Buffer.from(`${line(name)}\n`), `${name}.jsonl`), purpose });
    const first = await upload('one', 'batch');
    const second = await upload('two', 'user_data');
    const third = await upload('three', 'batch');
    const page = await openai.files.list({ limit: 2 });
    expect(page.data.map((file) => file.id)).toEqual([third.id, second.id]);
    expect(page.has_more).toBe(true);
    const all: string[] = [];
    for await (const file of openai.files.list({ limit: 1 })) all.push(file.id);
    expect(all).toEqual([third.id, second.id, first.id]);
    expect((await openai.files.list({ purpose: 'batch' })).data.map((file) => file.id)).toEqual([third.id, first.id]);

    expect(await openai.files.delete(second.id)).toMatchObject({ id: second.id, object: 'file', deleted: true });
    expect(await rejectionOf(openai.files.retrieve(second.id))).toBeInstanceOf(OpenAI.NotFoundError);
    expect(await rejectionOf(openai.files.content(second.id))).toBeInstanceOf(OpenAI.NotFoundError);
    expect(await rejectionOf(openai.files.delete(second.id))).toBeInstanceOf(OpenAI.NotFoundError);
    expect((await openai.files.list()).data.map((file) => file.id)).toEqual([third.id, first.id]);
  });

  it('another account cannot see, read or delete a file (404, as an unknown id)', async () => {
    const owner = await account();
    const other = await account();
    const file = await owner.openai.files.create({
      file: await toFile(Buffer.from(`${line('x')}\n`), 'x.jsonl'),
      purpose: 'batch',
    });
    expect(await rejectionOf(other.openai.files.retrieve(file.id))).toBeInstanceOf(OpenAI.NotFoundError);
    expect(await rejectionOf(other.openai.files.content(file.id))).toBeInstanceOf(OpenAI.NotFoundError);
    expect(await rejectionOf(other.openai.files.delete(file.id))).toBeInstanceOf(OpenAI.NotFoundError);
    expect((await other.openai.files.list()).data).toEqual([]);
    expect((await owner.openai.files.retrieve(file.id)).id).toBe(file.id);
  });
});

describe('refusals', () => {
  it('a bad line of a batch file is a 400 naming the line, and nothing is kept', async () => {
    const { openai } = await account();
    const text = `${line('a')}\n${line('b', { url: '/v1/messages' })}\n${line('c')}\n`;
    const refused = await rejectionOf(
      openai.files.create({ file: await toFile(Buffer.from(text), 'bad.jsonl'), purpose: 'batch' }),
    );
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('file');
    expect((refused as Error).message).toContain('line 2:');
    const duplicate = await rejectionOf(
      openai.files.create({
        file: await toFile(Buffer.from(`${line('a')}\n${line('a')}`), 'dup.jsonl'),
        purpose: 'batch',
      }),
    );
    expect((duplicate as Error).message).toContain('line 2:');
    // The same bytes as user data are only bytes.
    await openai.files.create({ file: await toFile(Buffer.from(text), 'bad.jsonl'), purpose: 'user_data' });
    expect((await openai.files.list()).data.map((file) => file.purpose)).toEqual(['user_data']);
  });

  it('a file past the per-file limit is 413, and the account quota is 400, both naming `file`', async () => {
    const { openai } = await account();
    const tooLarge = await rejectionOf(
      openai.files.create({ file: await toFile(patterned(MAX_FILE_BYTES + 1), 'big.bin'), purpose: 'user_data' }),
    );
    expect(tooLarge).toBeInstanceOf(OpenAI.APIError);
    expect((tooLarge as InstanceType<typeof OpenAI.APIError>).status).toBe(413);
    expect((tooLarge as InstanceType<typeof OpenAI.APIError>).param).toBe('file');
    // Two files of 2.5 MiB fit the 5 MiB quota; a third does not, until one is deleted.
    const size = 2.5 * 1024 * 1024;
    const kept = await openai.files.create({ file: await toFile(patterned(size), 'a.bin'), purpose: 'user_data' });
    await openai.files.create({ file: await toFile(patterned(size), 'b.bin'), purpose: 'user_data' });
    const overQuota = await rejectionOf(
      openai.files.create({ file: await toFile(patterned(size), 'c.bin'), purpose: 'user_data' }),
    );
    expect(overQuota).toBeInstanceOf(OpenAI.BadRequestError);
    expect((overQuota as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('file');
    expect((overQuota as Error).message).toContain('quota');
    await openai.files.delete(kept.id);
    await openai.files.create({ file: await toFile(patterned(size), 'c.bin'), purpose: 'user_data' });
  });

  it('a missing or unknown purpose is 400 naming `purpose`; a body that is not multipart is 415', async () => {
    const { openai, user } = await account();
    const refused = await rejectionOf(
      openai.files.create({
        file: await toFile(Buffer.from('x'), 'x.txt'),
        purpose: 'fine-tune' as unknown as 'batch',
      }),
    );
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('purpose');
    const json = await stack.api('POST', '/v1/files', { key: user.key, body: { purpose: 'batch' } });
    expect(json.status).toBe(415);
    expect(json.body).toMatchObject({ error: { type: expect.any(String), code: 'unsupported_media_type' } });
    expect((await openai.files.list()).data).toEqual([]);
  });

  it('needs a credential (401) holding gateway:invoke (403 insufficient_scope)', async () => {
    const { user } = await account();
    const narrow = await stack.seedKey({ userId: user.id, scopes: ['usage:read'] });
    for (const [method, path] of [
      ['GET', '/v1/files'],
      ['POST', '/v1/files'],
      ['GET', '/v1/files/file-1'],
      ['GET', '/v1/files/file-1/content'],
      ['DELETE', '/v1/files/file-1'],
    ] as const) {
      expect((await stack.api(method, path)).status).toBe(401);
      const forbidden = await stack.api(method, path, { key: narrow.secret });
      expect(forbidden.status).toBe(403);
      expect(forbidden.body).toMatchObject({ error: 'insufficient_scope', required_scopes: ['gateway:invoke'] });
    }
    const malformed = await stack.api('GET', '/v1/files/not-a-file', { key: user.key });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ error: { param: 'file_id' } });
  });
});
