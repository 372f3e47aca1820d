/**
 * What the fine-tuning routes need of a provider that fine-tunes (today provider_1, on the
 * widely used files and fine-tuning jobs protocol, reference/providers.md §8): upload a
 * training file, create, poll and cancel a job, and read its events and checkpoints.
 * The wire format stays in the provider's folder; failures are thrown as GatewayErrors in
 * our codes (with the provider's HTTP status, so a poll's 404 means the job is gone).
 */
import { GatewayError } from '../shared/errors.ts';

export interface FineTuningEndpoint {
  baseUrl: string;
  apiKey: string;
}

export type ProviderJobStatus = 'validating_files' | 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

/** The provider's job object, as the gateway keeps and shows it (ids of the provider's files replaced by the route). */
export interface ProviderJob {
  id: string;
  status: ProviderJobStatus;
  /** The provider's trained tokens so far (null before training starts). */
  trainedTokens: number | null;
  fineTunedModel: string | null;
  finishedAt: number | null;
  error: { code: string; message: string; param: string | null } | null;
  hyperparameters: Record<string, unknown>;
  seed: number | null;
  estimatedFinish: number | null;
  resultFiles: string[];
}

export interface NewProviderJob {
  /** The provider's model id. */
  model: string;
  trainingFile: string;
  validationFile?: string;
  hyperparameters: Record<string, unknown>;
  suffix?: string;
  seed?: number;
}

/** A page of a provider list (events, checkpoints), items as the provider sent them. */
export interface ProviderPage {
  data: Record<string, unknown>[];
  hasMore: boolean;
}

export interface PageQuery {
  after?: string;
  limit?: number;
}

export function isFinished(status: ProviderJobStatus): boolean {
  return status === 'succeeded' || status === 'failed' || status === 'cancelled';
}

export class FineTuningProviderError extends GatewayError {
  constructor(readonly providerStatus: number, error: GatewayError) {
    super(error.code, error.message);
  }
}

export interface FineTuningProvider {
  /** Uploads a JSONL file (purpose fine-tune); returns the provider's file id. */
  uploadFile(endpoint: FineTuningEndpoint, filename: string, bytes: Buffer, signal?: AbortSignal): Promise<string>;
  createJob(endpoint: FineTuningEndpoint, job: NewProviderJob, signal?: AbortSignal): Promise<ProviderJob>;
  getJob(endpoint: FineTuningEndpoint, id: string, signal?: AbortSignal): Promise<ProviderJob>;
  cancelJob(endpoint: FineTuningEndpoint, id: string): Promise<ProviderJob>;
  listEvents(endpoint: FineTuningEndpoint, id: string, query: PageQuery): Promise<ProviderPage>;
  listCheckpoints(endpoint: FineTuningEndpoint, id: string, query: PageQuery): Promise<ProviderPage>;
  close(): Promise<void>;
}
