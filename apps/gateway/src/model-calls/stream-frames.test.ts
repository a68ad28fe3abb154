import { DeliveredText } from './stream-frames';

describe('DeliveredText', () => {
  it('gives back every piece in order, across the runs it joins them in', () => {
    const delivered = new DeliveredText();
    expect(delivered.empty).toBe(true);
    const pieces = Array.from({ length: 50 }, (_, i) => `t${i} `);
    for (const piece of pieces) delivered.push(piece);
    expect(delivered.empty).toBe(false);
    expect(delivered.text()).toBe(pieces.join(''));
  });
});
