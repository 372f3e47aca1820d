/**
 * Scenario 6: a chat request carrying a 20 MiB data URL (a 3-page PDF padded to about 15 MiB,
 * the largest part the default MAX_PART_BYTES takes), sent one at a time to the emulator
 * directly and through the gateway, while small requests run in a loop against the gateway.
 * Reports the time the request spends in the gateway, the longest one part took to read
 * (/admin/v1/stats `media_part_max_ms`), the gateway's event-loop delay, and the small
 * requests served meanwhile.
 */
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { Pool } from 'undici';

export interface LargePartTarget {
  origin: string;
  path: string;
  headers: () => Record<string, string>;
}

export interface LargePartResult {
  data_url_bytes: number;
  direct_p50_ms: number;
  gateway_p50_ms: number;
  time_in_gateway_ms: number;
  worst_part_ms: number;
  event_loop_delay_ms: { p99: number; max: number };
  small_requests_meanwhile: { count: number; p50_ms: number; max_ms: number };
}

async function pdfDataUrl(): Promise<string> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 0; i < 3; i++) doc.addPage([300, 300]).drawText(`Page ${i + 1}`, { x: 20, y: 250, font, size: 18 });
  doc.context.register(doc.context.stream(new Uint8Array(15 * 1024 * 1024).fill(0x41)));
  return `data:application/pdf;base64,${Buffer.from(await doc.save({ useObjectStreams: true })).toString('base64')}`;
}

async function timed(pool: Pool, target: LargePartTarget, body: string): Promise<number> {
  const start = process.hrtime.bigint();
  const response = await pool.request({ method: 'POST', path: target.path, headers: { ...target.headers(), 'content-type': 'application/json' }, body });
  await response.body.text();
  if (response.statusCode !== 200) throw new Error(`${target.origin}: HTTP ${response.statusCode}`);
  return Number(process.hrtime.bigint() - start) / 1e6;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

export interface GatewayStats {
  event_loop_delay_ms: { p99: number; max: number };
  media_part_max_ms: number;
}

/** `stats(true)` reads and restarts the gateway's measurement (/admin/v1/stats?reset=true). */
export async function largePart(direct: LargePartTarget, gateway: LargePartTarget, stats: (reset: boolean) => Promise<GatewayStats>, runs: number, model: string): Promise<LargePartResult> {
  const url = await pdfDataUrl();
  const body = JSON.stringify({ model, messages: [{ role: 'user', content: [{ type: 'text', text: 'Summarise the document.' }, { type: 'file', file: { filename: 'big.pdf', file_data: url } }] }], max_tokens: 16 });
  const small = JSON.stringify({ model, messages: [{ role: 'user', content: 'Say hello in one short sentence.' }], max_tokens: 16 });
  const pools = { direct: new Pool(direct.origin, { connections: 1 }), gateway: new Pool(gateway.origin, { connections: 1 }), small: new Pool(gateway.origin, { connections: 1 }) };
  const times = { direct: [] as number[], gateway: [] as number[] };
  const smallDuring: number[] = [];
  try {
    // Warm-up: the PDF worker starts on first use.
    await timed(pools.gateway, gateway, body);
    await stats(true);
    let running = true;
    const background = (async () => {
      while (running) smallDuring.push(await timed(pools.small, gateway, small));
    })();
    for (let i = 0; i < runs; i++) {
      times.direct.push(await timed(pools.direct, direct, body));
      times.gateway.push(await timed(pools.gateway, gateway, body));
    }
    running = false;
    await background;
    const after = await stats(false);
    return {
      data_url_bytes: url.length,
      direct_p50_ms: round(percentile(times.direct, 50)),
      gateway_p50_ms: round(percentile(times.gateway, 50)),
      time_in_gateway_ms: round(percentile(times.gateway, 50) - percentile(times.direct, 50)),
      worst_part_ms: round(after.media_part_max_ms),
      event_loop_delay_ms: { p99: round(after.event_loop_delay_ms.p99), max: round(after.event_loop_delay_ms.max) },
      small_requests_meanwhile: { count: smallDuring.length, p50_ms: round(percentile(smallDuring, 50), 3), max_ms: round(Math.max(...smallDuring), 3) },
    };
  } finally {
    for (const pool of Object.values(pools)) await pool.close();
  }
}
