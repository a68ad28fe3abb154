import { DeliveredText, OutputGuard } from './stream-frames';

describe('DeliveredText', () => {
  it('gives back every piece in order, pushed as text or as escaped bytes off the wire, across its growth', () => {
    const delivered = new DeliveredText();
    expect(delivered.empty).toBe(true);
    expect(delivered.text()).toBe('');
    const pieces = Array.from(
      { length: 300 },
      (_, i) => [`t${i} `, 'say "hi"\n', 'é中😀', '\u2028', '\ud800', '\\'][i % 6]!,
    );
    for (const [i, piece] of pieces.entries()) {
      if (i % 2 === 0) delivered.push(piece);
      else {
        // As an event on the wire carries it: the JSON string's body, in UTF-8.
        const wire = Buffer.from(`data: {"content":${JSON.stringify(piece)}}\n\n`);
        const start = wire.indexOf(':"') + 2;
        delivered.pushEscaped(wire, start, wire.lastIndexOf('"}'));
      }
    }
    expect(delivered.empty).toBe(false);
    expect(delivered.text()).toBe(pieces.join(''));
  });

  it('gives what came after a size it had, and holds at least a byte per UTF-8 byte of text', () => {
    const delivered = new DeliveredText();
    delivered.push('first ');
    const size = delivered.size;
    delivered.push('then "é"');
    expect(delivered.text(size)).toBe('then "é"');
    expect(delivered.text(delivered.size)).toBe('');
    expect(delivered.size).toBeGreaterThanOrEqual(Buffer.byteLength('first then "é"'));
  });
});

describe('OutputGuard', () => {
  it(
    'stops a stream once its delivered text counts past twice ' + 'the limit, and counts nothing before the text could',
    () => {
      const delivered = new DeliveredText();
      const guard = new OutputGuard(5, delivered);
      // Nine bytes: fewer than the ten tokens that would pass twice the limit, whatever they are.
      delivered.push('a b c d e');
      expect(guard.reached()).toBe(false);
      for (let i = 0; i < 4; i++) {
        delivered.push(' word');
        expect(guard.reached()).toBe(false);
      }
      delivered.push(' word');
      expect(guard.reached()).toBe(true);
    },
  );

  it('never stops a stream without a limit', () => {
    const delivered = new DeliveredText();
    const guard = new OutputGuard(undefined, delivered);
    delivered.push('word '.repeat(10_000));
    expect(guard.reached()).toBe(false);
  });
});
