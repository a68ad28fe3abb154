import { timestampDate } from '@bufbuild/protobuf/wkt';
import { ApiError } from '@sbc/errors';
import { ResponsesService } from '@sbc/proto/sbc/runs/v1/responses_pb';
import { BODY_MESSAGE_MAX_BYTES, createRpcClient } from '@sbc/rpc';
import { createTestDatabase, rejectionOf } from '@sbc/testing';
import { loadRunsConfig, start } from '../main';

type Running = Awaited<ReturnType<typeof start>>;

/** A runs service on its own database with the given settings; stopped and dropped by `stop`. */
async function startRuns(label: string, env: Record<string, string> = {}) {
  const db = await createTestDatabase(label);
  const running = await start(
    loadRunsConfig({
      RUNS_GRPC_PORT: '0',
      RUNS_HTTP_PORT: '0',
      RUNS_WORKERS: '0',
      DATABASE_URL: db.databaseUrl,
      SBC_DATA_DIR: 'memory://',
      LOG_LEVEL: 'silent',
      ...env,
    }),
  );
  // As the edge's client: a stored response's context may be far larger than grpc-js's default 4 MiB.
  const client = createRpcClient(ResponsesService, {
    target: running.grpcAddress,
    deadlineMs: 10_000,
    channelOptions: { 'grpc.max_receive_message_length': BODY_MESSAGE_MAX_BYTES },
  });
  return {
    running,
    client,
    async stop() {
      client.close();
      await running.stop();
      await db.drop();
    },
  };
}

const ALICE = 'usr_responses_alice';
const BOB = 'usr_responses_bob';
const TEAM = 'org_responses_team';

let counter = 0;
/** A fresh response id and its bodies: `items` input items named `<id>_item_<n>`. */
function aResponse(items = 3, padding = '') {
  counter += 1;
  const id = `resp_store${counter}`;
  const inputItems = Array.from({ length: items }, (_, n) => ({
    id: `msg_${counter}_${n}`,
    type: 'message',
    role: 'user',
    content: [{ type: 'input_text', text: `item ${n}${padding}` }],
  }));
  const response = { id, object: 'response', status: 'completed', output: [], store: true };
  return { responseId: id, responseJson: JSON.stringify(response), inputItemsJson: JSON.stringify(inputItems) };
}

async function ownerTotals(running: Running, ownerId: string) {
  const row = await running.database.prisma.responseOwner.findUnique({ where: { ownerId } });
  return row ? { responses: row.responses, bytes: Number(row.bytes) } : undefined;
}

describe('stored responses over gRPC: kept for their owner alone, read back, paged and deleted', () => {
  let service: Awaited<ReturnType<typeof startRuns>>;
  beforeAll(async () => {
    service = await startRuns('runs_responses');
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('keeps a response for 30 days and returns its object and, when asked, its items', async () => {
    const stored = aResponse();
    const before = Date.now();
    const reply = await service.client.storeResponse({ ownerId: ALICE, ...stored });
    const expires = timestampDate(reply.expiresAt!).getTime();
    expect(expires - before).toBeGreaterThanOrEqual(30 * 86_400_000 - 1_000);
    expect(expires - Date.now()).toBeLessThanOrEqual(30 * 86_400_000);
    expect(reply.evictedIds).toEqual([]);

    const bare = await service.client.getResponse({ ownerId: ALICE, responseId: stored.responseId });
    expect(bare.responseJson).toBe(stored.responseJson);
    expect(bare.inputItemsJson).toBeUndefined();
    const whole = await service.client.getResponse({
      ownerId: ALICE,
      responseId: stored.responseId,
      withInputItems: true,
    });
    expect(whole.inputItemsJson).toBe(stored.inputItemsJson);
  });

  it('is not found for another account, for a team, and for an id nobody stored: the same 404', async () => {
    const stored = aResponse();
    await service.client.storeResponse({ ownerId: ALICE, ...stored });
    for (const ownerId of [BOB, TEAM]) {
      const refused = await rejectionOf(service.client.getResponse({ ownerId, responseId: stored.responseId }));
      expect(refused).toMatchObject({ code: 'not_found', status: 404 });
      expect(
        await rejectionOf(service.client.listInputItems({ ownerId, responseId: stored.responseId, limit: 20 })),
      ).toMatchObject({ code: 'not_found' });
      expect(
        await rejectionOf(service.client.deleteResponse({ ownerId, responseId: stored.responseId })),
      ).toMatchObject({ code: 'not_found' });
    }
    expect(await rejectionOf(service.client.getResponse({ ownerId: ALICE, responseId: 'resp_nobody' }))).toMatchObject({
      code: 'not_found',
      message: "Response with id 'resp_nobody' not found.",
    });
    // Still Alice's after the others tried.
    await service.client.getResponse({ ownerId: ALICE, responseId: stored.responseId });
  });

  it('pages input items newest first by default, oldest first when asked, after an item id', async () => {
    const stored = aResponse(5);
    await service.client.storeResponse({ ownerId: ALICE, ...stored });
    const ids = (JSON.parse(stored.inputItemsJson) as Array<{ id: string }>).map((item) => item.id);
    const page = async (query: { limit: number; ascending?: boolean; after?: string }) => {
      const reply = await service.client.listInputItems({ ownerId: ALICE, responseId: stored.responseId, ...query });
      return {
        ids: (JSON.parse(reply.itemsJson) as Array<{ id: string }>).map((item) => item.id),
        more: reply.hasMore,
      };
    };
    expect(await page({ limit: 2 })).toEqual({ ids: [ids[4], ids[3]], more: true });
    expect(await page({ limit: 2, after: ids[3] })).toEqual({ ids: [ids[2], ids[1]], more: true });
    expect(await page({ limit: 2, after: ids[1] })).toEqual({ ids: [ids[0]], more: false });
    expect(await page({ limit: 100, ascending: true })).toEqual({ ids, more: false });
    expect(await page({ limit: 3, ascending: true, after: ids[0] })).toEqual({ ids: ids.slice(1, 4), more: true });
    expect(await page({ limit: 3, after: 'msg_not_here' })).toEqual({ ids: [], more: false });
  });

  it('deletes a response: gone for every read, its bytes given back to the owner', async () => {
    const stored = aResponse();
    await service.client.storeResponse({ ownerId: BOB, ...stored });
    const before = await ownerTotals(service.running, BOB);
    expect(await service.client.deleteResponse({ ownerId: BOB, responseId: stored.responseId })).toEqual(
      expect.objectContaining({ responseId: stored.responseId }),
    );
    expect(
      await rejectionOf(service.client.getResponse({ ownerId: BOB, responseId: stored.responseId })),
    ).toMatchObject({ code: 'not_found' });
    expect(
      await rejectionOf(service.client.deleteResponse({ ownerId: BOB, responseId: stored.responseId })),
    ).toMatchObject({ code: 'not_found' });
    const size = Buffer.byteLength(stored.responseJson) + Buffer.byteLength(stored.inputItemsJson);
    expect(await ownerTotals(service.running, BOB)).toEqual({
      responses: before!.responses - 1,
      bytes: before!.bytes - size,
    });
  });

  it('refuses a second response with the same id, and ids, owners and limits that are not well formed', async () => {
    const stored = aResponse();
    await service.client.storeResponse({ ownerId: ALICE, ...stored });
    expect(await rejectionOf(service.client.storeResponse({ ownerId: BOB, ...stored }))).toMatchObject({
      code: 'conflict',
    });
    expect(await rejectionOf(service.client.getResponse({ ownerId: ALICE, responseId: 'msg_1' }))).toMatchObject({
      code: 'invalid_request',
      param: 'response_id',
    });
    expect(await rejectionOf(service.client.getResponse({ ownerId: '', responseId: 'resp_1' }))).toMatchObject({
      code: 'invalid_request',
      param: 'owner_id',
    });
    for (const limit of [0, 101]) {
      const refused = await rejectionOf(
        service.client.listInputItems({ ownerId: ALICE, responseId: stored.responseId, limit }),
      );
      expect(refused).toBeInstanceOf(ApiError);
      expect(refused).toMatchObject({ code: 'invalid_request', param: 'limit' });
    }
    expect(
      await rejectionOf(service.client.storeResponse({ ownerId: ALICE, ...aResponse(), inputItemsJson: '{}' })),
    ).toMatchObject({ code: 'invalid_request', param: 'input_items_json' });
  });

  it('takes a response of several MiB in one message (the edge bounds it, not grpc-js at 4 MiB)', async () => {
    const stored = aResponse(1, 'x'.repeat(6 * 1024 * 1024));
    await service.client.storeResponse({ ownerId: TEAM, ...stored });
    const read = await service.client.getResponse({
      ownerId: TEAM,
      responseId: stored.responseId,
      withInputItems: true,
    });
    expect(read.inputItemsJson).toBe(stored.inputItemsJson);
  });
});

describe("an owner's bounds: the oldest responses go first", () => {
  it('keeps RESPONSES_MAX_PER_ACCOUNT responses per owner, the oldest evicted, never another owner’s', async () => {
    const service = await startRuns('runs_responses_count', { RESPONSES_MAX_PER_ACCOUNT: '3' });
    try {
      const alices = [aResponse(), aResponse(), aResponse()];
      for (const stored of alices) await service.client.storeResponse({ ownerId: ALICE, ...stored });
      const bobs = aResponse();
      await service.client.storeResponse({ ownerId: BOB, ...bobs });
      const fourth = aResponse();
      const reply = await service.client.storeResponse({ ownerId: ALICE, ...fourth });
      expect(reply.evictedIds).toEqual([alices[0]!.responseId]);
      const refused = await rejectionOf(
        service.client.getResponse({ ownerId: ALICE, responseId: alices[0]!.responseId }),
      );
      expect(refused).toMatchObject({ code: 'not_found' });
      for (const kept of [alices[1]!, alices[2]!, fourth])
        await service.client.getResponse({ ownerId: ALICE, responseId: kept.responseId });
      await service.client.getResponse({ ownerId: BOB, responseId: bobs.responseId });
      expect((await ownerTotals(service.running, ALICE))!.responses).toBe(3);
    } finally {
      await service.stop();
    }
  });

  it('keeps RESPONSES_MAX_BYTES_PER_ACCOUNT bytes per owner, as many of the oldest evicted as it takes', async () => {
    const sized = () => aResponse(1, 'y'.repeat(1_000));
    const one = sized();
    const size = Buffer.byteLength(one.responseJson) + Buffer.byteLength(one.inputItemsJson);
    const service = await startRuns('runs_responses_bytes', { RESPONSES_MAX_BYTES_PER_ACCOUNT: String(3 * size + 10) });
    try {
      const stored = [one, sized(), sized()];
      for (const item of stored) await service.client.storeResponse({ ownerId: ALICE, ...item });
      // Twice the size of the others: two of the oldest make room for it.
      const large = aResponse(1, 'z'.repeat(1_000 + size));
      const reply = await service.client.storeResponse({ ownerId: ALICE, ...large });
      expect(reply.evictedIds).toEqual([stored[0]!.responseId, stored[1]!.responseId]);
      await service.client.getResponse({ ownerId: ALICE, responseId: stored[2]!.responseId });
      await service.client.getResponse({ ownerId: ALICE, responseId: large.responseId });
      const totals = await ownerTotals(service.running, ALICE);
      expect(totals!.responses).toBe(2);
      expect(totals!.bytes).toBeLessThanOrEqual(3 * size + 10);
      // One response larger than the whole bound is refused, and nothing is evicted for it.
      const huge = aResponse(1, 'h'.repeat(4 * size));
      expect(await rejectionOf(service.client.storeResponse({ ownerId: ALICE, ...huge }))).toMatchObject({
        code: 'invalid_request',
      });
      await service.client.getResponse({ ownerId: ALICE, responseId: stored[2]!.responseId });
    } finally {
      await service.stop();
    }
  });
});

describe('expiry', () => {
  it('serves a response until its time is up, then never; the purge deletes it and corrects the totals', async () => {
    const service = await startRuns('runs_responses_expiry', {
      RESPONSES_TTL_S: '1',
      RESPONSES_PURGE_INTERVAL_MS: '200',
    });
    try {
      const stored = aResponse();
      await service.client.storeResponse({ ownerId: ALICE, ...stored });
      await service.client.getResponse({ ownerId: ALICE, responseId: stored.responseId });
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      expect(
        await rejectionOf(service.client.getResponse({ ownerId: ALICE, responseId: stored.responseId })),
      ).toMatchObject({ code: 'not_found' });
      expect(
        await rejectionOf(service.client.listInputItems({ ownerId: ALICE, responseId: stored.responseId, limit: 5 })),
      ).toMatchObject({ code: 'not_found' });
      const prisma = service.running.database.prisma;
      const deadline = Date.now() + 10_000;
      while ((await prisma.storedResponse.count({ where: { id: stored.responseId } })) > 0) {
        if (Date.now() > deadline) throw new Error('the expired response was not purged within 10 s');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(await ownerTotals(service.running, ALICE)).toEqual({ responses: 0, bytes: 0 });
    } finally {
      await service.stop();
    }
  });
});
