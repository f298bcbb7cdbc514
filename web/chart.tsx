import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";

/**
 * A uPlot chart over weekly buckets. uPlot draws on a canvas and sets sizes through the CSSOM
 * (`element.style.x = ...`), which the page's CSP (`style-src 'self'`, no inline styles) allows;
 * its stylesheet is bundled into /assets/app.css. The canvas is hidden from assistive technology:
 * each chart's figure carries a text alternative (a table of the same numbers) beside it.
 */

export interface ChartSeries {
  label: string;
  values: (number | null)[];
  color: string;
  kind: "bars" | "line";
}

/** The band behind partial weeks (the stylesheet's `.swatch-partial` is the same colour, for the note). */
const PARTIAL = "#e6e9ed";

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
/** A bucket's first day (epoch seconds), in UTC: "Nov 17" for a day or a week's Monday, "Nov 2026" for a month. */
const bucketLabel = (per: "day" | "week" | "month") => (s: number) => {
  const d = new Date(s * 1000);
  return `${MONTHS[d.getUTCMonth()]} ${per === "month" ? d.getUTCFullYear() : d.getUTCDate()}`;
};
const BUCKET_SECONDS = { day: 86_400, week: 7 * 86_400, month: 30 * 86_400 };

/** x values: the buckets' first days as epoch seconds (uPlot's time unit). */
export function Chart({
  x,
  series,
  unit,
  incrs,
  shaded = [],
  per = "week",
}: {
  x: number[];
  series: ChartSeries[];
  unit: (v: number) => string;
  /** The steps the y axis may use (uPlot picks one), e.g. round durations; default: uPlot's. */
  incrs?: number[];
  /** Buckets (x values) drawn on a grey band: the window's partial weeks. */
  shaded?: number[];
  /** The buckets' length, for the axis labels. */
  per?: "day" | "week" | "month";
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const bars = uPlot.paths.bars?.({ size: [0.6, 40] });
    // Half a bucket of room at each end, so the first and last bars are whole (a bar is centred on
    // its week) and every chart's weeks line up with the bar chart's.
    const half = (x.length > 1 ? (x[1] as number) - (x[0] as number) : BUCKET_SECONDS[per]) / 2;
    const opts: uPlot.Options = {
      width: Math.max(200, el.clientWidth),
      height: 220,
      legend: { show: false },
      cursor: { show: false },
      // Weeks start Monday 00:00 UTC: label them in UTC whatever the reader's zone.
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
      scales: {
        x: { time: true, range: (_u, min, max) => [min - half, max + half] },
        y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
      },
      // The drawn x range, for the browser tests (whole bars at both ends).
      hooks: {
        ready: [(u) => el.setAttribute("data-x-range", `${u.scales.x?.min ?? ""},${u.scales.x?.max ?? ""}`)],
        // Partial weeks on a grey band behind the series (a canvas drawing: no inline style).
        drawClear: [
          (u) => {
            const { ctx, bbox } = u;
            ctx.save();
            ctx.fillStyle = PARTIAL;
            for (const at of shaded) {
              const left = u.valToPos(at - half, "x", true);
              const right = u.valToPos(at + half, "x", true);
              ctx.fillRect(left, bbox.top, right - left, bbox.height);
            }
            ctx.restore();
          },
        ],
      },
      axes: [
        {
          stroke: "#57606a",
          grid: { stroke: "#eaeef2" },
          ticks: { stroke: "#d0d7de" },
          // One tick per week (every few weeks when they would crowd), labelled with the Monday.
          splits: (u) => {
            const step = Math.max(1, Math.ceil((x.length * 64) / Math.max(1, u.bbox.width / devicePixelRatio)));
            return x.filter((_, i) => (x.length - 1 - i) % step === 0);
          },
          values: (_u, splits) => splits.map(bucketLabel(per)),
        },
        {
          stroke: "#57606a",
          grid: { stroke: "#eaeef2" },
          ticks: { stroke: "#d0d7de" },
          size: 60,
          ...(incrs ? { incrs } : {}),
          values: (_u, splits) => splits.map((v) => unit(v)),
        },
      ],
      series: [
        {},
        ...series.map((s) => ({
          label: s.label,
          stroke: s.color,
          width: 2,
          ...(s.kind === "bars" && bars
            ? { paths: bars, fill: `${s.color}cc`, points: { show: false } }
            : { points: { size: 5 } }),
          spanGaps: false,
        })),
      ],
    };
    const plot = new uPlot(opts, [x, ...series.map((s) => s.values)] as uPlot.AlignedData, el);
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(200, el.clientWidth), height: 220 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [x, series, unit, incrs, shaded, per]);
  return <div class="chart" ref={box} aria-hidden="true" />;
}

/** The chart's key, as text (uPlot's own legend is off: it is a table that only makes sense with the cursor). */
export function ChartKey({ series }: { series: ChartSeries[] }) {
  if (series.length < 2) return null;
  return (
    <ul class="chart-key" aria-hidden="true">
      {series.map((s) => (
        <li key={s.label}>
          <span class={`swatch swatch-${s.color.slice(1)}`} />
          {s.label}
        </li>
      ))}
    </ul>
  );
}
