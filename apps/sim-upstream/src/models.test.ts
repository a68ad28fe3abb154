import type { RunningSim } from './main';
import { anthropicClient, openAiClient, startSim } from './test-support';

let sim: RunningSim;
beforeAll(async () => {
  sim = await startSim({ extraModels: ['house-alpha', 'house-beta', 'house-gamma'] });
});
afterAll(() => sim.stop());

const allIds = ['sim-large', 'sim-small', 'house-alpha', 'house-beta', 'house-gamma'];

describe('GET /v1/models', () => {
  it('lists the built-in and configured models to the OpenAI SDK, owned by the simulator', async () => {
    const models = [];
    for await (const model of openAiClient(sim).models.list()) models.push(model);
    expect(models.map((m) => m.id)).toEqual(allIds);
    expect(
      models.every((m) => m.object === 'model' && m.owned_by === 'sim-upstream' && Number.isInteger(m.created)),
    ).toBe(true);
  });

  it("pages Anthropic's shape through every model when the SDK asks one at a time", async () => {
    const ids: string[] = [];
    for await (const model of anthropicClient(sim).models.list({ limit: 2 })) {
      expect(model).toMatchObject({ type: 'model', display_name: expect.stringContaining('simulator') });
      expect(model.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      ids.push(model.id);
    }
    expect(ids).toEqual(allIds);
    const firstPage = await anthropicClient(sim).models.list({ limit: 2 });
    expect(firstPage).toMatchObject({ has_more: true, first_id: 'sim-large', last_id: 'sim-small' });
  });

  it('retrieves any model id in either shape', async () => {
    expect(await openAiClient(sim).models.retrieve('anything-goes')).toMatchObject({
      id: 'anything-goes',
      owned_by: 'sim-upstream',
    });
    expect(await anthropicClient(sim).models.retrieve('claude-like')).toMatchObject({
      type: 'model',
      id: 'claude-like',
    });
  });
});

describe('a simulator that speaks only Anthropic', () => {
  let only: RunningSim;
  beforeAll(async () => {
    only = await startSim({}, ['anthropic']);
  });
  afterAll(() => only.stop());

  it(
    "lists in Anthropic's shape whatever headers come, as " + 'many self-hosted servers do, and has no OpenAI routes',
    async () => {
      const listed = await fetch(`${only.url}/v1/models`, { headers: { authorization: 'Bearer k' } });
      expect(((await listed.json()) as { data: unknown[] }).data[0]).toMatchObject({
        type: 'model',
        display_name: expect.any(String),
        created_at: expect.any(String),
      });
      const chat = await fetch(`${only.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(chat.status).toBe(404);
      const reply = await anthropicClient(only).messages.create({
        model: 'm',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(reply.type).toBe('message');
    },
  );
});
