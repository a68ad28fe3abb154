import OpenAI, { toFile } from 'openai';
import { newId } from '@sbc/ids';
import { AccountService } from '@sbc/proto/sbc/account/v1/account_pb';
import { createRpcClient } from '@sbc/rpc';
import { testBackends } from '@sbc/testing';
import { chatLine, ended, jsonl, untilBatch } from '../support/batches';
import { openAiFor, simHouse, startStack, type StackWith } from '../support/stack';
import { teamFixtures } from '../support/teams.harness';

/**
 * A batch's pace on its creating key (docs/batches.md "Pacing"): its lines take at most BATCHES_RATE_SHARE of the
 * key's `rpm`, counting the key's own calls, and the key's own calls keep the rest; a line refused for the share is
 * put back without counting a try, so a batch with BATCHES_MAX_ATTEMPTS=1 loses none of its lines to it; and the
 * batch's window still ends it while its lines wait.
 */
const redisUrl = testBackends().redisUrl;
const describeWithRedis = redisUrl ? describe : describe.skip;
if (!redisUrl) process.stdout.write('batch-share.int.test: no Redis in this run (TEST_REDIS_URL): skipped\n');

let stack: StackWith<{ label: string; runs: object }>;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits for a minute-long cell of the rate windows with `needMs` left: the windows slide over two cells aligned to
 * the clock, and a test straddling a cell's end would see the previous cell's count fade and let a few more in.
 */
async function cellWithRoom(needMs: number): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < needMs) await sleep(left + 50);
}

describeWithRedis("a batch's share of its creating key's rpm", () => {
  beforeAll(async () => {
    stack = await startStack({
      label: 'batch_share',
      house: simHouse,
      runs: {
        env: {
          RUNS_WORKERS: '0',
          BATCHES_WORKERS: '4',
          BATCHES_POLL_MS: '100',
          BATCHES_LEASE_MS: '15000',
          // One try per line: a yield that counted as one would fail the line.
          BATCHES_MAX_ATTEMPTS: '1',
        },
      },
      edgeEnv: { BATCHES_RATE_SHARE: '0.5' },
    });
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
  });

  it("a batch's key names its creating key and carries its rpm and tpm; no other key names one", async () => {
    const user = await teamFixtures(stack).user();
    const minted = await stack.api('POST', '/v1/keys', {
      key: user.key,
      body: { name: 'creator', scopes: ['gateway:invoke'], rpm: 20, tpm: 5_000 },
    });
    expect(minted.status).toBe(201);
    const creator = minted.body.id as string;
    const accountRpc = createRpcClient(AccountService, { target: stack.account.grpcAddress, deadlineMs: 10_000 });
    try {
      // As the runs service mints a batch's key: the creating key is the caller.
      const mint = (keyId: string | undefined, batchId?: string) =>
        accountRpc.createKey({
          caller: { userId: user.id, ...(keyId ? { keyId } : {}) },
          name: 'lines',
          scopes: ['gateway:invoke'],
          route: 'auto',
          mode: 'agent',
          batchId,
        });
      const batchId = `batch_${newId('req').slice('req_'.length)}`;
      expect((await mint(creator, batchId)).key).toMatchObject({
        batchId,
        parentKeyId: creator,
        rpm: 20n,
        tpm: 5_000n,
      });
      const fromSession = (await mint(undefined, batchId)).key;
      expect(fromSession?.batchId).toBe(batchId);
      expect(fromSession?.parentKeyId).toBeUndefined();
      // A key the creator mints that is not a batch's takes nothing from it: without limits it is wider (refused),
      // and with them it has no parent.
      await expect(mint(creator)).rejects.toMatchObject({ code: 'insufficient_scope', param: 'rpm' });
      const own = await accountRpc.createKey({
        caller: { userId: user.id, keyId: creator },
        name: 'own',
        scopes: ['gateway:invoke'],
        route: 'auto',
        mode: 'agent',
        rpm: 20n,
        tpm: 5_000n,
      });
      expect(own.key?.parentKeyId).toBeUndefined();
    } finally {
      accountRpc.close();
    }
  });

  it(
    'on a key of rpm 20 the lines take at most 10 of a minute, its own calls keep the other 10, a yield is no try, ' +
      'and the window still ends the batch',
    async () => {
      await cellWithRoom(35_000);
      const user = await teamFixtures(stack).user();
      const minted = await stack.api('POST', '/v1/keys', {
        key: user.key,
        body: { name: 'paced', scopes: ['gateway:invoke'], rpm: 20 },
      });
      expect(minted.status).toBe(201);
      const pacedKey = minted.body.key as string;
      // The file and the polling go through the account's other key: only the batch and the calls below count in
      // the paced key's window.
      const owner = openAiFor(stack.edge.url, user.key);
      const input = await owner.files.create({
        file: await toFile(
          Buffer.from(`${Array.from({ length: 16 }, (_, index) => chatLine(`p-${index}`)).join('\n')}\n`),
          'in.jsonl',
        ),
        purpose: 'batch',
      });
      const created = await new OpenAI({ baseURL: `${stack.edge.url}/v1`, apiKey: pacedKey }).batches.create({
        input_file_id: input.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      });

      const prisma = stack.runs.database.prisma;
      const lines = () => prisma.batchLine.findMany({ where: { batchId: created.id } });
      // The share is spent once a line was put back to wait for the window: the key's window then holds 10.
      const deadline = Date.now() + 20_000;
      while (!(await lines()).some((line) => line.state === 'queued' && line.notBefore !== null)) {
        if (Date.now() > deadline) throw new Error(`no line yielded: ${JSON.stringify(await lines())}`);
        await sleep(100);
      }

      // The key's own calls: the other 10 of its 20, then a refusal of its own (not a yield).
      let answered = 0;
      let refused: Response | undefined;
      for (let index = 0; index < 12 && !refused; index++) {
        const reply = await fetch(`${stack.edge.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${pacedKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'house', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 8 }),
        });
        if (reply.status === 200) answered += 1;
        else refused = reply;
        await reply.arrayBuffer();
      }
      expect(answered).toBe(10);
      expect(refused?.status).toBe(429);
      expect(refused?.headers.get('x-ratelimit-limit')).toBe('20');
      expect(refused?.headers.get('x-sbc-batch-yield')).toBeNull();

      // The batch took at most its share (the create counted in it too), and no line lost a try to waiting.
      const now = await lines();
      const succeeded = now.filter((line) => line.state === 'succeeded').length;
      expect(succeeded).toBeGreaterThan(0);
      expect(succeeded).toBeLessThanOrEqual(10 - 1);
      expect(now.filter((line) => line.state === 'failed')).toEqual([]);
      const waiting = now.filter((line) => line.state === 'queued' && line.notBefore !== null);
      expect(waiting.length).toBeGreaterThan(0);
      // Once a line yielded, the whole batch waits for the window: only lines already in flight then (one per
      // worker at most) were tried and put back, not line after line, each refused in turn.
      expect(waiting.length).toBeLessThanOrEqual(4);
      const paused = await prisma.batch.findUniqueOrThrow({ where: { id: created.id } });
      expect(paused.pausedUntil?.getTime()).toBeGreaterThan(Date.now());
      for (const line of now.filter((line) => line.state === 'queued')) expect(line.attempts).toBe(0);
      expect(await owner.batches.retrieve(created.id)).toMatchObject({
        status: 'in_progress',
        request_counts: { total: 16, completed: succeeded, failed: 0 },
      });

      // Its window ends while its lines wait: it ends expired, the lines never run in the error file.
      await prisma.batch.update({ where: { id: created.id }, data: { expiresAt: new Date() } });
      const done = await untilBatch(owner, created.id, ended, 30_000);
      expect(done.status).toBe('expired');
      expect(await jsonl(owner, done.output_file_id)).toHaveLength(succeeded);
      const errors = await jsonl(owner, done.error_file_id);
      expect(errors).toHaveLength(16 - succeeded);
      expect(errors.every((line) => line.error?.code === 'batch_expired')).toBe(true);
    },
    120_000,
  );
});
