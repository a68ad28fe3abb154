import { BLANK_STDDEV, isBlank, luminanceSpread } from './pixels';

const fill = (pixels: number, rgba: [number, number, number, number]) =>
  Uint8ClampedArray.from({ length: pixels * 4 }, (_, i) => rgba[i % 4]!);

describe('blank-page detection', () => {
  it('a page of one colour has no spread and is blank, whatever the colour', () => {
    expect(luminanceSpread(fill(1000, [255, 255, 255, 255]))).toBeCloseTo(0, 3);
    expect(isBlank(luminanceSpread(fill(1000, [15, 23, 42, 255])))).toBe(true);
  });

  it('a single small mark on a 1280×800 page is not blank: a 20×20 logo is enough', () => {
    const page = fill(1280 * 800, [255, 255, 255, 255]);
    for (let i = 0; i < 400 * 4; i += 4) page.set([0, 0, 0, 255], i);
    const spread = luminanceSpread(page);
    expect(spread).toBeGreaterThan(BLANK_STDDEV);
    expect(isBlank(spread)).toBe(false);
  });

  it('runs from its own source text, as the browser gets it', () => {
    const rebuilt = new Function(`return (${luminanceSpread.toString()})`)() as typeof luminanceSpread;
    const half = Uint8ClampedArray.from([0, 0, 0, 255, 255, 255, 255, 255]);
    expect(rebuilt(half)).toBeCloseTo(127.5, 5);
  });
});
