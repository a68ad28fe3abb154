import { createUtf8Decoder } from './utf8';

/** A seeded generator, so a failure names a case that can be run again. */
function random(seed: number) {
  let state = seed;
  return (below: number) => {
    state = (state * 1103515245 + 12345) % 2147483648;
    // The high bits: an LCG's low bits repeat with short periods.
    return Math.floor((state / 2147483648) * below);
  };
}

// Bytes around every boundary of the UTF-8 rules: ASCII, BOM bytes, each lead byte class, the narrow second
// byte ranges, continuation bytes and bytes that can never appear.
const BYTES = [
  0x41, 0x0a, 0xef, 0xbb, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe2, 0xed, 0xf0, 0xf4, 0xf5, 0xff, 0x80, 0x8f, 0x90,
  0x9f, 0xa0, 0xbf, 0x82, 0xac,
];

describe('createUtf8Decoder', () => {
  it('gives what a streaming TextDecoder gives, chunk by chunk, for any bytes cut anywhere', () => {
    const next = random(27);
    for (let round = 0; round < 5_000; round++) {
      const bytes = Uint8Array.from({ length: 1 + next(12) }, () => BYTES[next(BYTES.length)]!);
      const cuts = [
        0,
        ...Array.from({ length: next(4) }, () => next(bytes.length + 1)).sort((a, b) => a - b),
        bytes.length,
      ];
      const reference = new TextDecoder();
      const decoder = createUtf8Decoder();
      for (let i = 1; i < cuts.length; i++) {
        const chunk = bytes.subarray(cuts[i - 1], cuts[i]);
        expect([Buffer.from(bytes).toString('hex'), cuts, decoder.write(chunk)]).toEqual([
          Buffer.from(bytes).toString('hex'),
          cuts,
          reference.decode(chunk, { stream: true }),
        ]);
      }
      expect(decoder.end()).toBe(reference.decode());
    }
  });

  it('joins a character split over three chunks and drops only a leading BOM', () => {
    const decoder = createUtf8Decoder();
    const bytes = Buffer.from('\ufeffa😀\ufeff', 'utf8');
    expect(
      [
        decoder.write(bytes.subarray(0, 2)),
        decoder.write(bytes.subarray(2, 5)),
        decoder.write(bytes.subarray(5, 7)),
        decoder.write(bytes.subarray(7)),
        decoder.end(),
      ].join(''),
    ).toBe('a😀\ufeff');
  });
});
