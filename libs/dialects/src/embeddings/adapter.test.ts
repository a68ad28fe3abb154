import { embeddingsReply, shapeIssues } from '../__fixtures__/consumer-shapes';
import { callerDialect } from '../dialect-registry';
import { DialectRequestError } from '../request-error';
import { UpstreamError } from '../upstream-error';
import { MAX_EMBEDDING_INPUTS } from './check-request';

const EMBEDDINGS = callerDialect('embeddings');
const passthrough = EMBEDDINGS.passthrough!;

const issuesOf = (body: Record<string, unknown>) =>
  EMBEDDINGS.check({ model: 'm', ...body }).map(({ path, code }) => `${path} ${code}`);

describe('an embeddings body', () => {
  it.each([
    ['a string', 'hello'],
    ['strings', ['hello', 'world']],
    ['tokens', [1, 2, 3]],
    ['token arrays', [[1, 2], [3]]],
  ])('takes %s as input', (_kind, input) => {
    expect(issuesOf({ input, dimensions: 256, encoding_format: 'base64', user: 'u-1' })).toEqual([]);
  });

  it.each([
    ['missing', undefined, ['input required']],
    ['an empty string', '', ['input too_small']],
    ['an empty array', [], ['input too_small']],
    ['an empty string among strings', ['a', ''], ['input.1 too_small']],
    ['a mix of kinds', ['a', 1], ['input.1 invalid_type']],
    ['a fractional token', [1, 2.5], ['input.1 invalid_type']],
    ['a negative token', [[1], [2, -1]], ['input.1.1 invalid_type']],
    ['an empty token array', [[1], []], ['input.1 too_small']],
    ['an object', { text: 'a' }, ['input invalid_type']],
    ['too many items', Array.from({ length: MAX_EMBEDDING_INPUTS + 1 }, () => 'a'), ['input invalid_value']],
  ])('refuses input that is %s', (_kind, input, issues) => {
    expect(issuesOf({ input })).toEqual(issues);
  });

  it('refuses a dimensions that is not a whole number of 1 or more, an unknown encoding, a non-string user', () => {
    expect(issuesOf({ input: 'a', dimensions: 0 })).toEqual(['dimensions invalid_value']);
    expect(issuesOf({ input: 'a', dimensions: 1.5 })).toEqual(['dimensions invalid_value']);
    expect(issuesOf({ input: 'a', encoding_format: 'int8' })).toEqual(['encoding_format invalid_value']);
    expect(issuesOf({ input: 'a', user: 7 })).toEqual(['user invalid_type']);
  });

  it('refuses a stream, and lists every problem at once', () => {
    expect(issuesOf({ input: '', stream: true, dimensions: -1 })).toEqual([
      'input too_small',
      'dimensions invalid_value',
      'stream unsupported',
    ]);
  });

  it('reserves no output: an embedding produces no tokens', () => {
    expect(EMBEDDINGS.requestedOutputLimit({ model: 'm', input: 'a' })).toBe(0);
  });

  it('counts text inputs with the tokenizer it is given, and token inputs as their tokens', () => {
    const words = (text: string) => text.split(' ').length;
    const count = (input: unknown) => EMBEDDINGS.countInput!({ model: 'm', input }, words);
    expect(count('one two three')).toBe(3);
    expect(count(['one two', 'three'])).toBe(3);
    expect(count([5, 6, 7, 8])).toBe(4);
    expect(count([[5, 6], [7]])).toBe(3);
  });

  it('has no chat form: a translation (an Anthropic-dialect engine) is a 400 on model', () => {
    const parse = () => EMBEDDINGS.parse({ model: 'ant/sim', input: 'a' });
    expect(parse).toThrow(DialectRequestError);
    expect(parse).toThrow(/ant\/sim is served by an Anthropic-dialect engine/);
  });
});

describe('an embeddings call passed through', () => {
  it("is sent to /embeddings as the caller wrote it, for the engine's model, without the gateway's `models`", () => {
    expect(passthrough.path).toBe('/embeddings');
    const body = { model: 'house-embed', input: ['a'], encoding_format: 'base64', dimensions: 8, models: ['x'] };
    expect(passthrough.request(body, { model: 'sim-embed', outputLimit: 0, stream: false })).toEqual({
      model: 'sim-embed',
      input: ['a'],
      encoding_format: 'base64',
      dimensions: 8,
    });
  });

  it("answers in OpenAI's full shape, with the caller's model, from a minimal server's reply", () => {
    const raw = { data: [{ embedding: [0.6, 0.8] }, { embedding: 'AAAAAA==', index: 1 }], usage: { prompt_tokens: 5 } };
    const { body, usage } = passthrough.reply(raw, 'house-embed');
    expect(shapeIssues(embeddingsReply, body)).toEqual([]);
    expect(body).toEqual({
      object: 'list',
      data: [
        { object: 'embedding', index: 0, embedding: [0.6, 0.8] },
        { object: 'embedding', index: 1, embedding: 'AAAAAA==' },
      ],
      model: 'house-embed',
      usage: { prompt_tokens: 5, total_tokens: 5 },
    });
    expect(usage).toEqual({ inputTokens: 5, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 });
  });

  it("fails a 200 that is not a list of embeddings as the upstream's fault (502)", () => {
    for (const raw of [{ error: { message: 'quota' } }, { object: 'list' }, { data: [{ embedding: { x: 1 } }] }]) {
      let thrown: unknown;
      try {
        passthrough.reply(raw, 'm');
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(UpstreamError);
      expect((thrown as UpstreamError).failure.status).toBe(502);
    }
  });

  it("renders refusals in OpenAI's error shape", () => {
    const body = EMBEDDINGS.errorBody({ status: 400, message: 'bad', param: 'input' }, 'req_1');
    expect(body).toEqual({
      error: { message: 'bad', type: 'invalid_request_error', param: 'input', code: null },
      request_id: 'req_1',
    });
  });
});
