import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { palette, plottedTotal, stackSeries, type Series } from './stack';

/**
 * Stacked bars over time in uPlot (canvas, so it draws thousands of bars in a few milliseconds). The canvas
 * is one image to assistive technology; its legend and total are text beside it, and every figure is in the
 * table each page shows under its chart.
 */
export function StackedChart({
  title,
  times,
  series,
  unit,
  format,
  formatAxis = (ticks) => ticks.map(format),
  onDrawn,
}: {
  title: string;
  /** Bucket starts, in seconds. */
  times: number[];
  series: Series[];
  unit: string;
  format: (value: number) => string;
  /** The value axis's labels, given every gridline at once (a step-aware format); `format` each by default. */
  formatAxis?: (ticks: number[]) => string[];
  onDrawn?: () => void;
}) {
  const host = useRef<HTMLDivElement>(null);
  const colours = palette(series.length);
  const total = plottedTotal(series);

  useEffect(() => {
    const element = host.current;
    if (!element) return;
    const colourOf = new Map(series.map((one, index) => [one.id, colours[index]!]));
    const stacked = stackSeries(series);
    const bars = uPlot.paths.bars!({ size: [0.8, 48], gap: 1 });
    const plot = new uPlot(
      {
        width: Math.max(320, element.clientWidth),
        height: 260,
        legend: { show: false },
        cursor: { show: false },
        scales: { x: { time: true } },
        axes: [{}, { values: (_u, ticks) => formatAxis(ticks), size: 80 }],
        series: [
          {},
          ...stacked.map((one) => ({
            label: one.label,
            stroke: colourOf.get(one.id),
            fill: colourOf.get(one.id),
            width: 0,
            paths: bars,
            points: { show: false },
          })),
        ],
      },
      [times, ...stacked.map((one) => one.values)],
      element,
    );
    onDrawn?.();
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(320, element.clientWidth), height: 260 }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
    // Redrawn when the data changes; colours and format follow from it.
  }, [times, series]);

  return (
    <figure className="chart">
      <div
        ref={host}
        role="img"
        aria-label={`${title}: ${format(total)} ${unit} in all, stacked by ${series.length} series`}
      />
      <figcaption>
        <p>
          {title}. Chart total: <strong data-chart-total={total}>{format(total)}</strong> {unit}
        </p>
        <ul className="legend" aria-label="Legend">
          {series.map((one, index) => (
            <li key={one.id}>
              <span className="swatch" aria-hidden="true" style={{ background: colours[index] }} />
              {one.label}
            </li>
          ))}
        </ul>
      </figcaption>
    </figure>
  );
}
