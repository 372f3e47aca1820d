/**
 * The media and GPU hosts (provider_4, provider_5, provider_6, provider_9, provider_10,
 * custom) and the one interface the media routes and the job runner use to reach them.
 * Every host speaks Replicate-style predictions (reference/providers.md §7); the wire
 * format stays inside this folder.
 */
import type { ProviderId } from '../../catalog/catalog-file.ts';
import { GatewayError } from '../../shared/errors.ts';

export const MEDIA_HOSTS = ['provider_4', 'provider_5', 'provider_6', 'provider_9', 'provider_10', 'custom'] as const satisfies readonly ProviderId[];
export type MediaHostId = (typeof MEDIA_HOSTS)[number];

export function isMediaHost(provider: string): provider is MediaHostId {
  return (MEDIA_HOSTS as readonly string[]).includes(provider);
}

/** Where a host is and the key it takes (its base URL means what the Replicate SDK's `baseUrl` means: `…/v1`). */
export interface HostEndpoint {
  baseUrl: string;
  apiKey: string;
}

export type PredictionStatus = 'starting' | 'processing' | 'succeeded' | 'failed' | 'canceled';

/** A prediction as the gateway needs it, whatever the host's extra fields. */
export interface Prediction {
  id: string;
  status: PredictionStatus;
  /** Output file URLs; undefined when the output is not a URL or a list of URLs (unreadable for a media route). */
  outputs: string[] | undefined;
  /** The host's `output` as it came (text or JSON for a transcript); null while there is none. */
  output: unknown;
  /** The host's error text of a failed prediction. */
  error: string | undefined;
  /** `metrics.predict_time`: GPU seconds billed by GPU-time models. */
  predictTime: number | undefined;
  /** Seconds of video or audio output, when the host reports them. */
  outputSeconds: number | undefined;
  /** When processing started and ended at the host (Unix ms), when it says. */
  startedAt: number | undefined;
  completedAt: number | undefined;
}

export function isTerminal(status: PredictionStatus): boolean {
  return status === 'succeeded' || status === 'failed' || status === 'canceled';
}

/** An error answer of the host, in our codes, keeping the host's HTTP status (a poll's 404 means the prediction is gone). */
export class HostError extends GatewayError {
  constructor(readonly hostStatus: number, error: GatewayError) {
    super(error.code, error.message);
  }
}

export interface CreateOptions {
  /** `Prefer: wait=N` (1–60 s): the host holds the answer until the run ends or N seconds pass. */
  waitSeconds?: number;
  signal?: AbortSignal;
}

/**
 * Create, poll and cancel predictions. Failures are thrown as GatewayErrors in our codes:
 * 422 (and 400, 413) → provider_rejected_request; 429 → upstream_rate_limited; 5xx or a
 * failed connection → upstream_error; 401, 402, 403, 404 → model_unavailable (operator error).
 */
export interface MediaHost {
  /** `model` is the catalog's provider_model_id (`owner/name` at the host). */
  create(endpoint: HostEndpoint, model: string, input: Record<string, unknown>, options?: CreateOptions): Promise<Prediction>;
  get(endpoint: HostEndpoint, id: string, signal?: AbortSignal): Promise<Prediction>;
  cancel(endpoint: HostEndpoint, id: string, signal?: AbortSignal): Promise<Prediction>;
  close(): Promise<void>;
}
