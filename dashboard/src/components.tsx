/** Small shared pieces: loading and error states, a uPlot chart, a usage bar, a two-step confirm. */
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { credits } from './format.ts';

export function Status({ loading, error }: { loading: boolean; error: string | null }) {
  if (error !== null) return <p class="error" role="alert">{error}</p>;
  if (loading) return <p class="loading" role="status">Loading…</p>;
  return null;
}

export function Failure({ error }: { error: string | null }) {
  return error === null ? null : <p class="error" role="alert">{error}</p>;
}

export interface ChartSeries {
  label: string;
  values: number[];
  color: string;
}

const utc = (seconds: number) => uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC');
const bars = uPlot.paths.bars?.({ size: [0.8, 48], align: 1 });

/**
 * Bars over a time range: one per bucket starting at `times` (milliseconds, every bucket of the
 * range, zeros included), the x axis exactly `range` and in UTC, as the tables are. `stacked`
 * piles the series; the legend and the table still read each one's own value. A table of every
 * bucket (read by screen readers, and in print) carries the same figures.
 */
export function Chart({ title, times, series, range, bucket, stacked, format }: {
  title: string; times: number[]; series: ChartSeries[]; range: [number, number]; bucket: 'hour' | 'day'; stacked?: boolean; format: (n: number) => string;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (el === null) return;
    const width = () => Math.max(260, el.clientWidth);
    // Stacked: each series drawn at the sum of itself and those after it, the largest sum first.
    const drawn = stacked === true ? series.map((_, i) => times.map((__, j) => series.slice(i).reduce((sum, s) => sum + (s.values[j] ?? 0), 0))) : series.map((s) => s.values);
    const plot = new uPlot(
      {
        width: width(),
        height: 220,
        tzDate: utc,
        legend: { show: true },
        scales: { x: { time: true, range: () => [range[0] / 1000, range[1] / 1000] } },
        // UTC, as the tables: hours as 14:00 and midnights as the date; days as the date.
        axes: [{ values: (_u, ticks) => ticks.map((t) => axisLabel(t * 1000, bucket)) }, { size: 64, values: (_u, ticks) => ticks.map((t) => format(t)) }],
        series: [
          { value: (_u, v) => (v === null ? '—' : `${when(v)}`) },
          ...series.map((s, i) => ({
            label: s.label, stroke: s.color, fill: `${s.color}${stacked === true ? 'cc' : '99'}`, width: 1, paths: bars, points: { show: false },
            value: (_u: uPlot, _v: number | null, _si: number, at: number | null) => (at === null ? '—' : format(series[i]?.values[at] ?? 0)),
          })),
        ],
        hooks: {
          setScale: [(u, key) => {
            if (key !== 'x') return;
            el.dataset.xMin = String(u.scales.x?.min);
            el.dataset.xMax = String(u.scales.x?.max);
          }],
        },
      },
      [times.map((t) => t / 1000), ...drawn],
      el,
    );
    const observer = new ResizeObserver(() => plot.setSize({ width: width(), height: 220 }));
    observer.observe(el);
    return () => {
      observer.disconnect();
      plot.destroy();
    };
  }, [times, series, range[0], range[1], stacked]);
  const when = (seconds: number) => bucketLabel(seconds * 1000, bucket);
  const totals = series.map((s) => `${s.label}: ${format(s.values.reduce((a, b) => a + b, 0))}`).join(', ');
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div ref={box} aria-hidden="true" />
      <p class="muted total">{series.every((s) => s.values.every((v) => v === 0)) ? 'Nothing in this range.' : `In this range: ${totals}.`}</p>
      <div class="sr-only">
      <table>
        <caption>{title}, per {bucket} (UTC)</caption>
        <thead><tr><th scope="col">{bucket === 'hour' ? 'Hour (UTC)' : 'Day (UTC)'}</th>{series.map((s) => <th key={s.label} scope="col">{s.label}</th>)}</tr></thead>
        <tbody>
          {times.map((t, i) => (
            <tr key={t}><th scope="row">{bucketLabel(t, bucket)}</th>{series.map((s) => <td key={s.label}>{format(s.values[i] ?? 0)}</td>)}</tr>
          ))}
        </tbody>
      </table>
      </div>
    </figure>
  );
}

/** An x-axis tick in UTC: `14:00` within a day, the date at midnight or for day bars. */
function axisLabel(ms: number, bucket: 'hour' | 'day'): string {
  const d = new Date(ms);
  if (bucket === 'hour' && (d.getUTCHours() !== 0 || d.getUTCMinutes() !== 0)) return `${String(d.getUTCHours()).padStart(2, '0')}:${String(d.getUTCMinutes()).padStart(2, '0')}`;
  return d.toLocaleDateString('en-GB', { timeZone: 'UTC', day: 'numeric', month: 'short' });
}

/** A bucket's start as the tables show it: `26 Nov 09:00 UTC`, or `26 Nov 2026` for a day. */
export function bucketLabel(ms: number, bucket: 'hour' | 'day'): string {
  const d = new Date(ms);
  const day = d.toLocaleDateString('en-GB', { timeZone: 'UTC', day: 'numeric', month: 'short', ...(bucket === 'day' ? { year: 'numeric' } : {}) });
  return bucket === 'day' ? day : `${day} ${String(d.getUTCHours()).padStart(2, '0')}:00 UTC`;
}

/** Usage against a limit; no bar without a limit. */
export function UsageBar({ label, used, limit }: { label: string; used: number; limit: number | null }) {
  if (limit === null) return <div class="usage"><span>{label}: {credits(used)} credits (no limit)</span></div>;
  const share = limit === 0 ? 1 : Math.min(1, used / limit);
  const level = share >= 1 ? 'full' : share >= 0.8 ? 'high' : 'ok';
  return (
    <div class="usage">
      <span>{label}: {credits(used)} of {credits(limit)} credits</span>
      <progress class={level} max={limit === 0 ? 1 : limit} value={Math.min(used, limit === 0 ? 1 : limit)} aria-label={`${label} usage`}>
        {Math.round(share * 100)}%
      </progress>
    </div>
  );
}

/** A button that asks once more before acting. */
export function ConfirmButton({ label, question, onConfirm, danger }: { label: string; question: string; onConfirm: () => void; danger?: boolean }) {
  const [asking, setAsking] = useState(false);
  const confirmRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) confirmRef.current?.focus();
  }, [asking]);
  if (!asking) return <button type="button" class={danger === true ? 'danger' : ''} onClick={() => setAsking(true)}>{label}</button>;
  return (
    <span class="confirm" role="group" aria-label={question}>
      <span>{question}</span>
      <button type="button" ref={confirmRef} class={danger === true ? 'danger' : ''} onClick={() => { setAsking(false); onConfirm(); }}>
        Yes, {label.toLowerCase()}
      </button>
      <button type="button" onClick={() => setAsking(false)}>Cancel</button>
    </span>
  );
}

export { Field } from '../../web-shared/ui.tsx';
