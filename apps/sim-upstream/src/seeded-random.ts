/**
 * mulberry32: a small seeded generator of numbers in [0, 1). The same seed gives the same numbers on every
 * machine, so a seeded fault plan fails the same calls on every run and an embedding is the same every time.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
