import { callerDialect, type Dialect } from '@sbc/dialects';
import { ApiError } from '@sbc/errors';
import type { Target } from '../routing/targets';
import { checkModelKind } from './model-kind';
import { checkedCall } from './read-call';

const target = (callerModel: string, catalogId: string | undefined, model = catalogId ?? callerModel): Target => ({
  callerModel,
  kind: catalogId ? 'house' : 'byo',
  engine: { dialect: 'openai', baseUrl: 'http://up.test', model, headers: {}, label: 'up' },
  label: 'up',
  upstream: 'up',
  healthKey: 'up',
  catalogId,
});

const call = (dialect: Dialect, body: Record<string, unknown>) =>
  checkedCall(callerDialect(dialect), { input: 'a', messages: [], max_tokens: 10, ...body });

/** The refusal's param and message, or undefined when the call may go on. */
function refusal(dialect: Dialect, body: Record<string, unknown>, targets: Target[]) {
  try {
    checkModelKind(call(dialect, body), targets);
    return undefined;
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return { status: error.status, param: error.param, message: error.callerMessage };
  }
}

describe('the model kind a route calls', () => {
  it('lets an embedding model embed and a chat model chat', () => {
    expect(refusal('embeddings', { model: 'house-embed' }, [target('house-embed', 'house-embed')])).toBeUndefined();
    expect(refusal('chat', { model: 'house' }, [target('house', 'house')])).toBeUndefined();
  });

  it('refuses a chat model on embeddings with 400 on model, saying what to name instead', () => {
    expect(refusal('embeddings', { model: 'gpt-6.1-sol' }, [target('gpt-6.1-sol', 'gpt-6.1-sol')])).toEqual({
      status: 400,
      param: 'model',
      message: expect.stringMatching(/gpt-6\.1-sol is a chat model.*name an embedding model/),
    });
  });

  it('refuses an embedding model on every chat dialect with 400 on model', () => {
    for (const dialect of ['chat', 'responses', 'messages'] as const)
      expect(refusal(dialect, { model: 'house-embed' }, [target('house-embed', 'house-embed')])).toMatchObject({
        param: 'model',
        message: 'house-embed is an embedding model: call it on POST /v1/embeddings.',
      });
  });

  it('names `models` when the mismatched model is a fallback', () => {
    const targets = [target('house-embed', 'house-embed'), target('house', 'house')];
    expect(refusal('embeddings', { model: 'house-embed', models: ['house'] }, targets)).toMatchObject({
      param: 'models',
    });
  });

  it("matches a model on the caller's endpoint by its catalog id, and leaves one the catalog does not list", () => {
    const own = target('oai/text-embedding-3-small', undefined, 'text-embedding-3-small');
    expect(refusal('chat', { model: own.callerModel }, [own])).toMatchObject({ param: 'model' });
    expect(
      refusal('embeddings', { model: 'oai/my-embedder' }, [target('oai/my-embedder', undefined, 'my-embedder')]),
    ).toBeUndefined();
  });

  it("refuses dimensions past the model's, and any other than its own where it cannot shorten", () => {
    const small = [target('text-embedding-3-small', 'text-embedding-3-small')];
    expect(refusal('embeddings', { model: 'text-embedding-3-small', dimensions: 1536 }, small)).toBeUndefined();
    expect(refusal('embeddings', { model: 'text-embedding-3-small', dimensions: 256 }, small)).toBeUndefined();
    expect(refusal('embeddings', { model: 'text-embedding-3-small', dimensions: 1537 }, small)).toEqual({
      status: 400,
      param: 'dimensions',
      message: 'dimensions is 1537; text-embedding-3-small answers at most 1536.',
    });
    const ada = [target('text-embedding-ada-002', 'text-embedding-ada-002')];
    expect(refusal('embeddings', { model: 'text-embedding-ada-002', dimensions: 1536 }, ada)).toBeUndefined();
    expect(refusal('embeddings', { model: 'text-embedding-ada-002', dimensions: 512 }, ada)).toMatchObject({
      param: 'dimensions',
      message: expect.stringMatching(/always answers 1536 dimensions/),
    });
  });
});
