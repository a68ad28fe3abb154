import { base64Vector, embedText, SIM_EMBEDDING_DIMENSIONS } from './embedding';

const norm = (vector: readonly number[]) => Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));

describe('simulated embeddings', () => {
  it('are the same vector for the same text, another for another text', () => {
    expect(embedText('hello', 8)).toEqual(embedText('hello', 8));
    expect(embedText('hello', 8)).not.toEqual(embedText('hello!', 8));
  });

  it('have unit length at every size', () => {
    for (const dimensions of [1, 3, 256, SIM_EMBEDDING_DIMENSIONS]) {
      const vector = embedText('a text to embed', dimensions);
      expect(vector).toHaveLength(dimensions);
      expect(norm(vector)).toBeCloseTo(1, 10);
    }
  });

  it("shortened, are the full vector's start normalised again", () => {
    const full = embedText('shorten me', 64);
    const short = embedText('shorten me', 16);
    const start = full.slice(0, 16);
    const scale = norm(start);
    short.forEach((value, index) => expect(value).toBeCloseTo(start[index]! / scale, 12));
  });

  it('in base64 are little-endian float32s', () => {
    const vector = [0.5, -0.25, 1];
    const bytes = Buffer.from(base64Vector(vector), 'base64');
    expect([0, 4, 8].map((offset) => bytes.readFloatLE(offset))).toEqual(vector);
  });
});
