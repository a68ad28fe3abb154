/** One plotted series: a label and a value per x. */
export interface Series {
  id: string;
  label: string;
  values: number[];
}

/**
 * Series as a stacked chart draws them: each one's top edge is the running sum of itself and every series
 * below it. Returned top first, because a later-drawn (lower) band paints over the one above.
 */
export function stackSeries(series: Series[]): Series[] {
  const running: number[] = [];
  const stacked = series.map((one) => ({
    ...one,
    values: one.values.map((value, index) => (running[index] = (running[index] ?? 0) + value)),
  }));
  return stacked.reverse();
}

/** The sum of every value of every series: what a stacked chart shows in all. */
export function plottedTotal(series: Series[]): number {
  return series.reduce((sum, one) => sum + one.values.reduce((a, b) => a + b, 0), 0);
}

/** Distinct, evenly spaced hues: one per series, stable for a series' position. */
export function palette(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `hsl(${Math.round((i * 360) / Math.max(n, 1) + 210) % 360} 65% 45%)`);
}
