/** Small shared pieces: loading and error states, a uPlot chart, a usage bar, a two-step confirm. */
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';

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

/** A time chart; `times` in milliseconds. The caption and a data table summary keep it readable without sight. */
export function Chart({ title, times, series, unit }: { title: string; times: number[]; series: ChartSeries[]; unit: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (el === null) return;
    const width = () => Math.max(280, el.clientWidth);
    const plot = new uPlot(
      {
        width: width(),
        height: 220,
        legend: { show: true },
        scales: { x: { time: true } },
        axes: [{}, { size: 60, values: (_u, ticks) => ticks.map((t) => `${t.toLocaleString('en-US')}`) }],
        series: [{}, ...series.map((s) => ({ label: s.label, stroke: s.color, fill: `${s.color}22`, width: 2 }))],
      },
      [times.map((t) => t / 1000), ...series.map((s) => s.values)],
      el,
    );
    const observer = new ResizeObserver(() => plot.setSize({ width: width(), height: 220 }));
    observer.observe(el);
    return () => {
      observer.disconnect();
      plot.destroy();
    };
  }, [times, series]);
  const totals = series.map((s) => `${s.label}: ${s.values.reduce((a, b) => a + b, 0).toLocaleString('en-US')} ${unit}`).join(', ');
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div ref={box} role="img" aria-label={`${title}. ${times.length === 0 ? 'No data in this range.' : totals}`} />
      {times.length === 0 && <p class="muted">No data in this range.</p>}
    </figure>
  );
}

/** Usage against a limit; no bar without a limit. */
export function UsageBar({ label, used, limit }: { label: string; used: number; limit: number | null }) {
  if (limit === null) return <div class="usage"><span>{label}: {used.toLocaleString('en-US')} credits (no limit)</span></div>;
  const share = limit === 0 ? 1 : Math.min(1, used / limit);
  const level = share >= 1 ? 'full' : share >= 0.8 ? 'high' : 'ok';
  return (
    <div class="usage">
      <span>{label}: {used.toLocaleString('en-US')} of {limit.toLocaleString('en-US')} credits</span>
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
