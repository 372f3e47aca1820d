/**
 * The host's prediction object → the gateway's Prediction. Only what billing and the
 * answer need is read; everything else the host adds is ignored.
 */
import { z } from 'zod';
import type { Prediction, PredictionStatus } from './media-host.ts';

const STATUSES = new Set<PredictionStatus>(['starting', 'processing', 'succeeded', 'failed', 'canceled']);

const predictionSchema = z.object({
  id: z.string().min(1),
  status: z.string(),
  output: z.unknown().optional(),
  error: z.unknown().optional(),
  metrics: z.record(z.string(), z.unknown()).nullish(),
  started_at: z.string().nullish(),
  completed_at: z.string().nullish(),
});

/** Seconds of output under the names hosts use for them. */
const OUTPUT_SECONDS = ['video_output_duration_seconds', 'audio_output_duration_seconds', 'output_duration_seconds'];

/** undefined when the body is not a prediction. */
export function readPrediction(body: unknown): Prediction | undefined {
  const parsed = predictionSchema.safeParse(body);
  if (!parsed.success) return undefined;
  const p = parsed.data;
  const metrics = p.metrics ?? {};
  return {
    id: p.id,
    // A status this gateway does not know yet is treated as still running; the job's deadline bounds it.
    status: STATUSES.has(p.status as PredictionStatus) ? (p.status as PredictionStatus) : 'processing',
    outputs: outputUrls(p.output),
    output: p.output ?? null,
    error: errorText(p.error),
    predictTime: seconds(metrics.predict_time),
    outputSeconds: OUTPUT_SECONDS.map((name) => seconds(metrics[name])).find((s) => s !== undefined),
    startedAt: time(p.started_at),
    completedAt: time(p.completed_at),
  };
}

/** A URL, or a list of URLs; nothing yet is an empty list; anything else (text, JSON) is not a media output. */
function outputUrls(output: unknown): string[] | undefined {
  if (output === undefined || output === null) return [];
  if (typeof output === 'string') return [output];
  if (Array.isArray(output) && output.every((item): item is string => typeof item === 'string')) return output;
  return undefined;
}

function errorText(error: unknown): string | undefined {
  if (error === undefined || error === null || error === '') return undefined;
  return typeof error === 'string' ? error : JSON.stringify(error);
}

function seconds(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

function time(value: string | null | undefined): number | undefined {
  if (value === undefined || value === null) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

/** The host's message in an error answer: `detail`, else `title`, else the text. */
export function hostMessage(body: unknown, text: string): string | undefined {
  if (typeof body === 'object' && body !== null) {
    const b = body as { detail?: unknown; title?: unknown };
    const detail = typeof b.detail === 'string' ? b.detail : typeof b.title === 'string' ? b.title : undefined;
    if (detail !== undefined) return detail;
  }
  return text === '' ? undefined : text;
}
