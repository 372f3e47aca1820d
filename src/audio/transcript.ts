/**
 * A transcription host's output → one transcript, and the transcript in the answer shapes
 * of the widely used transcription API: json `{text}`, text, srt, vtt, verbose_json.
 * Hosts answer a string, or an object with `text` (or `transcription`) and optional
 * `segments` of `{start, end, text}` and `language`.
 */
import { z } from 'zod';
import { GatewayError } from '../shared/errors.ts';

export const RESPONSE_FORMATS = ['json', 'text', 'srt', 'vtt', 'verbose_json'] as const;
export type ResponseFormat = (typeof RESPONSE_FORMATS)[number];

export interface Segment {
  start: number;
  end: number;
  text: string;
}

export interface Transcript {
  text: string;
  segments: Segment[];
  language: string | undefined;
}

const segmentSchema = z.object({ start: z.number().nonnegative(), end: z.number().nonnegative(), text: z.string() });
const outputSchema = z.union([
  z.string(),
  z.object({
    text: z.string().optional(),
    transcription: z.string().optional(),
    segments: z.array(segmentSchema).optional(),
    language: z.string().optional(),
    detected_language: z.string().optional(),
  }),
]);

/** The transcript of the one prediction, or 502 upstream_error (the run is refunded). */
export function readTranscript(outputs: readonly unknown[]): Transcript {
  const parsed = outputSchema.safeParse(outputs[0]);
  if (!parsed.success) throw unreadable();
  if (typeof parsed.data === 'string') return { text: parsed.data, segments: [], language: undefined };
  const text = parsed.data.text ?? parsed.data.transcription;
  if (text === undefined) throw unreadable();
  return { text, segments: parsed.data.segments ?? [], language: parsed.data.language ?? parsed.data.detected_language };
}

function unreadable(): GatewayError {
  return new GatewayError('upstream_error', 'The transcription host answered without a readable transcript. Nothing was charged.');
}

export interface Rendered {
  contentType: string;
  body: string | Record<string, unknown>;
}

/** `duration`: the audio's length when it could be read (verbose_json; the one segment of a transcript without any). */
export function renderTranscript(t: Transcript, format: ResponseFormat, context: { language: string | undefined; duration: number | undefined }): Rendered {
  const segments = t.segments.length > 0 ? t.segments : [{ start: 0, end: context.duration ?? 0, text: t.text }];
  switch (format) {
    case 'json':
      return { contentType: 'application/json; charset=utf-8', body: { text: t.text } };
    case 'text':
      return { contentType: 'text/plain; charset=utf-8', body: `${t.text}\n` };
    case 'srt':
      return { contentType: 'text/plain; charset=utf-8', body: segments.map((s, i) => `${i + 1}\n${clock(s.start, ',')} --> ${clock(s.end, ',')}\n${s.text.trim()}\n`).join('\n') };
    case 'vtt':
      return { contentType: 'text/vtt; charset=utf-8', body: `WEBVTT\n\n${segments.map((s) => `${clock(s.start, '.')} --> ${clock(s.end, '.')}\n${s.text.trim()}\n`).join('\n')}` };
    case 'verbose_json':
      return {
        contentType: 'application/json; charset=utf-8',
        body: {
          task: 'transcribe',
          language: t.language ?? context.language ?? null,
          duration: context.duration ?? segments.reduce((end, s) => Math.max(end, s.end), 0),
          text: t.text,
          segments: segments.map((s, id) => ({ id, start: s.start, end: s.end, text: s.text })),
        },
      };
  }
}

/** HH:MM:SS,mmm (srt) or HH:MM:SS.mmm (vtt). */
function clock(seconds: number, mark: string): string {
  const ms = Math.round(seconds * 1000);
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}${mark}${pad(ms % 1000, 3)}`;
}
