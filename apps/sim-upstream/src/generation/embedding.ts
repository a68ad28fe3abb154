import { createHash } from 'node:crypto';
import { seededRandom } from '../seeded-random';

/** The length of the simulator's vectors when the caller names no `dimensions` (OpenAI's small model's). */
export const SIM_EMBEDDING_DIMENSIONS = 1_536;

/**
 * A deterministic vector of unit length for one input (a text, or its tokens as given): the same input always
 * gives the same vector. Its components come from a generator seeded by the input's hash, so a shorter
 * `dimensions` is the longer vector's start, normalised again, as OpenAI's shortened embeddings are.
 */
export function embedText(input: string, dimensions: number): number[] {
  const next = seededRandom(createHash('sha256').update(input).digest().readUInt32LE(0));
  const vector = Array.from({ length: dimensions }, () => next() * 2 - 1);
  const norm = Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0)) || 1;
  return vector.map((value) => value / norm);
}

/** A vector as OpenAI's `base64` encoding sends it: the bytes of little-endian float32s. */
export function base64Vector(vector: readonly number[]): string {
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((value, index) => bytes.writeFloatLE(value, index * 4));
  return bytes.toString('base64');
}
