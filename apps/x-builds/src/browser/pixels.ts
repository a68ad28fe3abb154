/**
 * Blank-page detection. A screenshot is decoded by the browser itself (an <img> drawn on a canvas in a page of
 * its own, with no app CSP in the way), so no PNG decoder is needed here; what is measured is the spread of
 * the pixels' luminance.
 */

/** Below this standard deviation of luminance (0–255) the page shows, in effect, one flat colour. */
export const BLANK_STDDEV = 2;

/**
 * Standard deviation of luminance over RGBA pixels (alpha ignored). Runs inside the browser too, so it
 * must stay self-contained: no imports, no helpers from outside its body.
 */
export function luminanceSpread(rgba: ArrayLike<number>): number {
  const pixels = Math.floor(rgba.length / 4);
  if (pixels === 0) return 0;
  let sum = 0;
  let squares = 0;
  for (let i = 0; i < pixels * 4; i += 4) {
    const y = 0.2126 * rgba[i]! + 0.7152 * rgba[i + 1]! + 0.0722 * rgba[i + 2]!;
    sum += y;
    squares += y * y;
  }
  const mean = sum / pixels;
  return Math.sqrt(Math.max(0, squares / pixels - mean * mean));
}

export const isBlank = (spread: number): boolean => spread < BLANK_STDDEV;
