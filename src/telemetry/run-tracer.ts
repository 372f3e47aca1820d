/**
 * Traces of paid runs: every run a span, every provider call of it a child span, named and
 * described by the OpenTelemetry GenAI semantic conventions (otlp-tracer.ts exports them).
 * Without OTEL_EXPORTER_OTLP_ENDPOINT the tracer is NO_TRACER: nothing is made or kept.
 * A span never carries a key (only its place in the provider's list) nor any content.
 */

export interface RunStart {
  /** The GenAI operation: chat, embeddings. */
  operation: string;
  /** The model the client asked for. */
  requestedModel: string;
  jobId: string;
}

export interface RunEnd {
  /** The catalog slug that answered. */
  responseModel?: string;
  inputTokens?: number;
  outputTokens?: number;
  /** Our error code when the run failed (refunded). */
  errorType?: string;
}

export interface AttemptStart {
  operation: string;
  /** The catalog slug tried. */
  model: string;
  provider: string;
  /** The provider's GenAI name (openai, anthropic, gcp.gemini, deepseek), else the provider id. */
  providerName: string;
  /** The model's id at the provider (the deployment). */
  providerModelId: string;
  /** The key's place in the provider's list, from 0. */
  keyIndex: number;
  /** 1 for the run's first call. */
  number: number;
  serverAddress: string;
  serverPort: number;
}

export interface AttemptEnd {
  /** The provider's HTTP status; 0 when none came. */
  status: number;
  /** Our error code when the attempt failed. */
  errorType?: string;
  /** Why another attempt follows. */
  retryReason?: string;
  inputTokens?: number;
  outputTokens?: number;
}

export interface AttemptSpan {
  end(facts: AttemptEnd): void;
}

export interface RunSpan {
  attempt(facts: AttemptStart): AttemptSpan;
  end(facts: RunEnd): void;
}

export interface RunTracer {
  startRun(facts: RunStart): RunSpan;
  /** Sends what is left and stops. */
  close(): Promise<void>;
}

const NO_ATTEMPT: AttemptSpan = { end() {} };
const NO_RUN: RunSpan = { attempt: () => NO_ATTEMPT, end() {} };

export const NO_TRACER: RunTracer = {
  startRun: () => NO_RUN,
  close: () => Promise.resolve(),
};
