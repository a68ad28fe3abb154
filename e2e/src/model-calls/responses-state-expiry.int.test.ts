import OpenAI from 'openai';
import { rejectionOf } from '@sbc/testing';
import { openAiFor, startStack, type RunsStack } from '../support/stack';

/**
 * A stored response is served for RESPONSES_TTL_S (30 days by default; 1 s here) and then never: not read back, not
 * continued. The purge that deletes it afterwards is apps/runs/src/rpc/responses.int.test.ts's.
 */
let stack: RunsStack;

beforeAll(async () => {
  stack = await startStack({
    label: 'responses_expiry',
    runs: { env: { RUNS_WORKERS: '0', RESPONSES_TTL_S: '1' } },
  });
}, 90_000);

afterAll(async () => {
  await stack?.stop();
});

it('an expired response is 404 to retrieve, input_items and previous_response_id', async () => {
  const created = await stack.openai.responses.create({ model: 'house', input: 'Short-lived' });
  expect((await stack.openai.responses.retrieve(created.id)).id).toBe(created.id);
  await new Promise((resolve) => setTimeout(resolve, 1_200));
  expect(await rejectionOf(stack.openai.responses.retrieve(created.id))).toBeInstanceOf(OpenAI.NotFoundError);
  expect(await rejectionOf(stack.openai.responses.inputItems.list(created.id))).toBeInstanceOf(OpenAI.NotFoundError);
  const continued = await rejectionOf(
    openAiFor(stack.edge.url).responses.create({ model: 'house', input: 'more', previous_response_id: created.id }),
  );
  expect(continued).toBeInstanceOf(OpenAI.NotFoundError);
  expect(continued.error).toMatchObject({ code: 'previous_response_not_found' });
});
