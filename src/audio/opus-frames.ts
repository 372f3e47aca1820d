/**
 * How much audio one Opus packet decodes to, from its first bytes (RFC 6716 §3.1): the TOC
 * byte's configuration gives the frame size, its last two bits the frame count (code 3: the
 * next byte's low six bits). Used to measure Ogg Opus and Matroska/WebM Opus files by what a
 * decoder plays, whatever their timestamps say.
 */

/** Opus counts samples at 48 kHz whatever the input rate. */
export const OPUS_RATE = 48_000;

/** RFC 6716 §3.2.5: a packet holds at most 120 ms. */
const MAX_PACKET_SAMPLES = 5_760;

/** Samples a frame of the TOC configuration lasts: SILK 10/20/40/60 ms, hybrid 10/20 ms, CELT 2.5/5/10/20 ms. */
function frameSamples(config: number): number {
  if (config < 12) return [480, 960, 1_920, 2_880][config % 4] ?? 0;
  if (config < 16) return [480, 960][config % 2] ?? 0;
  return [120, 240, 480, 960][config % 4] ?? 0;
}

/**
 * Samples at 48 kHz of a packet whose first byte is `toc` and second `count` (undefined past
 * the packet's end). An empty packet (no TOC) or a code-3 packet without a count is 0.
 */
export function opusPacketSamples(toc: number | undefined, count: number | undefined): number {
  if (toc === undefined) return 0;
  const code = toc & 3;
  const frames = code === 0 ? 1 : code < 3 ? 2 : (count ?? 0) & 0x3f;
  return Math.min(frames * frameSamples(toc >> 3), MAX_PACKET_SAMPLES);
}
