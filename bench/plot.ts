/**
 * The bench's figures as a PNG (bench/results/latest.png, shown in the README): throughput
 * (non-stream and 20-chunk streams) and one-request-at-a-time latency for the direct path,
 * the bare proxy and the gateway. An SVG drawn here, rendered by headless Chromium
 * (playwright-core; CHROMIUM_PATH, default /usr/bin/chromium).
 * `node --import tsx bench/plot.ts` redraws it from bench/results/latest.json.
 */
import { readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

const PARTIES = ['direct', 'proxy', 'gateway'] as const;
type PartyName = (typeof PARTIES)[number];
const COLOURS: Record<PartyName, string> = { direct: '#9aa5b1', proxy: '#5b8def', gateway: '#e8773a' };
const LABELS: Record<PartyName, string> = { direct: 'direct (no proxy)', proxy: 'bare Node proxy', gateway: 'gateway (full billing)' };

/** The parts of latest.json the plot reads. */
export interface PlottedResults {
  date: string;
  machine: { cores: number; cpu?: string; node: string };
  seconds_per_run: number;
  command?: string;
  throughput_nonstream?: Partial<Record<PartyName, { rps: number }>>;
  throughput_stream?: Partial<Record<PartyName, { rps: number }>>;
  added_latency?: Partial<Record<PartyName, { p50_ms: number; p99_ms: number }>> & { added_p50_ms: number; added_p99_ms: number };
}

const W = 440;
const H = 300;
const TOP = 50;
const BOTTOM = 60;
const LEFT = 60;

function esc(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;');
}

/** One panel of grouped bars: groups × parties, values labelled on top. */
function panel(title: string, unit: string, groups: { label: string; values: Partial<Record<PartyName, number>> }[], format: (n: number) => string): string {
  const max = Math.max(1, ...groups.flatMap((g) => Object.values(g.values)));
  const plotH = H - TOP - BOTTOM;
  const groupW = (W - LEFT - 20) / groups.length;
  const barW = Math.min(40, (groupW - 30) / PARTIES.length);
  const y = (v: number) => TOP + plotH - (v / max) * plotH;
  let svg = `<text x="${W / 2}" y="22" text-anchor="middle" font-size="15" font-weight="600">${esc(title)}</text>`;
  svg += `<text x="14" y="${TOP + plotH / 2}" transform="rotate(-90 14 ${TOP + plotH / 2})" text-anchor="middle" font-size="12" fill="#444">${esc(unit)}</text>`;
  for (let i = 0; i <= 4; i++) {
    const v = (max * i) / 4;
    svg += `<line x1="${LEFT}" x2="${W - 10}" y1="${y(v)}" y2="${y(v)}" stroke="#e3e3e3"/><text x="${LEFT - 6}" y="${y(v) + 4}" text-anchor="end" font-size="11" fill="#666">${esc(format(v))}</text>`;
  }
  groups.forEach((group, g) => {
    const x0 = LEFT + g * groupW + (groupW - barW * PARTIES.length) / 2;
    PARTIES.forEach((party, p) => {
      const value = group.values[party];
      if (value === undefined) return;
      const x = x0 + p * barW;
      svg += `<rect x="${x + 2}" y="${y(value)}" width="${barW - 4}" height="${TOP + plotH - y(value)}" fill="${COLOURS[party]}"/>`;
      svg += `<text x="${x + barW / 2}" y="${y(value) - 4}" text-anchor="middle" font-size="10">${esc(format(value))}</text>`;
    });
    svg += `<text x="${LEFT + g * groupW + groupW / 2}" y="${TOP + plotH + 18}" text-anchor="middle" font-size="12">${esc(group.label)}</text>`;
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif">${svg}</svg>`;
}

export function benchSvg(results: PlottedResults): string {
  const rps = (row: PlottedResults['throughput_nonstream']) => Object.fromEntries(PARTIES.flatMap((p) => (row?.[p] === undefined ? [] : [[p, row[p].rps]])));
  const latency = results.added_latency;
  const at = (key: 'p50_ms' | 'p99_ms') => Object.fromEntries(PARTIES.flatMap((p) => (latency?.[p] === undefined ? [] : [[p, latency[p][key]]])));
  const throughput = panel(`Throughput, 50 connections, ${results.seconds_per_run} s`, 'requests per second', [
    { label: 'non-stream', values: rps(results.throughput_nonstream) },
    { label: 'stream (20 chunks)', values: rps(results.throughput_stream) },
  ], (n) => (n >= 1000 ? `${(n / 1000).toFixed(1)}k` : n.toFixed(0)));
  const latencies = panel('Latency, one request at a time', 'milliseconds', [
    { label: 'p50', values: at('p50_ms') },
    { label: 'p99', values: at('p99_ms') },
  ], (n) => n.toFixed(2));
  const legend = PARTIES.map((p) => `<span style="margin-right:18px"><span style="display:inline-block;width:12px;height:12px;background:${COLOURS[p]};margin-right:5px;vertical-align:-1px"></span>${LABELS[p]}</span>`).join('');
  const added = latency === undefined ? '' : ` · gateway added latency p50 +${latency.added_p50_ms} ms, p99 +${latency.added_p99_ms} ms`;
  const caption = `${esc(results.date.slice(0, 10))} · ${results.machine.cores} cores (${esc(results.machine.cpu ?? 'unknown CPU')}) · Node ${esc(results.machine.node)} · ${esc(results.command ?? 'npm run bench')}${added}`;
  return `<!doctype html><meta charset="utf-8"><body style="margin:0;background:#fff"><div id="plot" style="display:inline-block;padding:12px 16px;font:13px sans-serif">
<div>${throughput}${latencies}</div><div style="margin:6px 0 4px">${legend}</div><div style="color:#555;font-size:12px">${caption}</div></div></body>`;
}

/** Renders the results to a PNG file. */
export async function plotBench(results: PlottedResults, file: URL): Promise<void> {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  try {
    const page = await browser.newPage({ deviceScaleFactor: 2 });
    await page.setContent(benchSvg(results));
    await page.locator('#plot').screenshot({ path: file.pathname });
  } finally {
    await browser.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const results = JSON.parse(readFileSync(new URL('./results/latest.json', import.meta.url), 'utf8')) as PlottedResults;
  await plotBench(results, new URL('./results/latest.png', import.meta.url));
  console.log('written: bench/results/latest.png');
}
