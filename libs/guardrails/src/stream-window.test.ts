import fc from 'fast-check';
import { DetectorSet } from './detectors';
import { STREAM_WINDOW_CHARS, WindowScanner } from './stream-window';

const redacting = new DetectorSet([
  { type: 'email', action: 'redact' },
  { type: 'card', action: 'redact' },
]);

/** A text cut into deltas at the given points. */
function deltasOf(text: string, cuts: number[]): string[] {
  const points = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((a, b) => a - b);
  const deltas: string[] = [];
  let at = 0;
  for (const point of points) {
    deltas.push(text.slice(at, point));
    at = point;
  }
  deltas.push(text.slice(at));
  return deltas;
}

const piece = fc.oneof(
  fc.string({ unit: fc.constantFrom('a', ' ', '.', '\n', 'é') }),
  fc.constant('mail me at someone@example.com please'),
  fc.constant('card 4111 1111 1111 1111 ok'),
);

describe('a stream window', () => {
  it('releases, however the text is cut into deltas, what redacting the whole text gives', () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), fc.array(fc.nat(), { maxLength: 30 }), (pieces, cuts) => {
        const text = pieces.join(' ');
        const scanner = new WindowScanner((chunk) => redacting.findings(chunk), 64);
        let out = '';
        for (const delta of deltasOf(text, cuts)) out += scanner.push(delta).text;
        out += scanner.flush().text;
        expect(out).toBe(redacting.apply(text).text);
      }),
    );
  });

  it('holds back at most the window', () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 60 }), (pieces) => {
        const scanner = new WindowScanner((chunk) => redacting.findings(chunk));
        for (const delta of pieces) {
          scanner.push(delta);
          expect(scanner.heldChars).toBeLessThanOrEqual(STREAM_WINDOW_CHARS);
        }
      }),
    );
  });

  it('reports a block as soon as the window holds it, releasing nothing of it', () => {
    const blocking = new DetectorSet([{ type: 'words', action: 'block', words: ['forbidden'] }]);
    const scanner = new WindowScanner((chunk) => blocking.findings(chunk), 16);
    expect(scanner.push('a fine start, long enough to release ').text).not.toBe('');
    expect(scanner.push('forbid').block).toBeUndefined();
    expect(scanner.push('den words').block).toMatchObject({ type: 'words' });
  });
});
