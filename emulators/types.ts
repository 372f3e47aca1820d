/**
 * The common API of the provider protocol emulators: fake provider servers that speak
 * each real wire format (as each provider's own API reference documents it), for tests, the demo
 * and the benchmark.
 */

export type EmulatorKind = 'openai' | 'anthropic' | 'gemini' | 'deepseek' | 'predictions';

export interface RecordedRequest {
  method: string;
  /** Path and query as received (`req.url`). */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON; the raw text when the body is not JSON; undefined when empty. */
  body: unknown;
  /** The body's text exactly as received (byte-for-byte fidelity tests); '' when empty. */
  rawBody: string;
}

/**
 * Token counts in each protocol's own raw terms (nothing is added up for you):
 * - openai: prompt_tokens = input, cached_tokens = cacheRead, cache_write_tokens = cacheWrite (sent
 *   only when positive, as GPT-5.6 and later bill writes), completion_tokens = output,
 *   reasoning_tokens = reasoning (already inside output, as OpenAI reports it).
 * - deepseek: as openai, plus prompt_cache_hit_tokens = cacheRead, prompt_cache_miss_tokens = input − cacheRead.
 * - anthropic: input_tokens = input (excludes cache), cache_read_input_tokens = cacheRead,
 *   cache_creation_input_tokens = cacheWrite + cacheWrite1h, split in cache_creation as
 *   ephemeral_5m_input_tokens = cacheWrite and ephemeral_1h_input_tokens = cacheWrite1h,
 *   output_tokens = output (thinking included).
 * - gemini: promptTokenCount = input (includes cachedContentTokenCount = cacheRead),
 *   candidatesTokenCount = output (excludes thoughts), thoughtsTokenCount = reasoning,
 *   totalTokenCount = input + output + reasoning.
 */
export interface ScenarioUsage {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
  /** Anthropic only: written with the 1-hour lifetime. */
  cacheWrite1h?: number;
  reasoning?: number;
}

export interface ScenarioToolCall {
  name: string;
  arguments: Record<string, unknown>;
}

export type Scenario =
  | {
      kind: 'text';
      text: string;
      reasoning?: string;
      /** The provider's own finish value (`length`, `max_tokens`, `MAX_TOKENS`, `SAFETY`, …). */
      finish?: string;
      usage?: ScenarioUsage | 'none';
      /** Split the text into this many stream chunks (default ~20). */
      chunks?: number;
      refusal?: string;
    }
  | {
      kind: 'tool_calls';
      calls: ScenarioToolCall[];
      text?: string;
      usage?: ScenarioUsage | 'none';
      /** Extension: reasoning before the calls (DeepSeek reasoning_content, Anthropic thinking, Gemini thought parts). */
      reasoning?: string;
      /** Extension: override the protocol's natural tool finish value. */
      finish?: string;
    }
  | { kind: 'error'; status: number; body?: unknown; headers?: Record<string, string> }
  | { kind: 'stream_error'; afterChunks: number; text?: string }
  | { kind: 'cut'; afterChunks: number; text?: string }
  | { kind: 'hang' }
  | { kind: 'blocked' }
  | {
      kind: 'embedding';
      /** Vectors of this size whatever was asked (a wrong-size answer). */
      dimensions?: number;
      /** Only the first this many vectors (an answer short of vectors). */
      vectors?: number;
      /** prompt_tokens reported instead of the real count; 'none' omits usage. */
      usage?: number | 'none';
    }
  | PredictionScenario
  | FineTuningScenario;

/** provider_1's fine-tuning (openai emulator): how the next created job runs (taken at its creation). */
export interface FineTuningScenario {
  kind: 'fine_tuning';
  /** Length of each phase step and training step, ms (default 20): validating 1 step, queued 1 step, running epochs × stepsPerEpoch steps. */
  stepMs?: number;
  /** Training steps per epoch (default 4); a checkpoint at the end of each epoch. */
  stepsPerEpoch?: number;
  /** Trained tokens of the whole run (default: the file's example tokens × epochs); they grow with the steps done. */
  trainedTokens?: number;
  /** The job fails half-way through training with this error text. */
  fail?: string;
}

/**
 * The predictions emulator (media and GPU hosts): how the next created prediction runs.
 * An `error` scenario answers the create call itself; `hang` never answers it.
 */
export interface PredictionScenario {
  kind: 'prediction';
  /** Time in `starting` (queued, not billed) before processing, ms (default 0). */
  startMs?: number;
  /** Time in `processing`, ms (default 50). */
  durationMs?: number;
  /** Output file names (default one per `input.n` / `input.num_outputs`, else one: `out-<i>.mp4` when the input has a `duration`, else `out-<i>.png`). */
  outputs?: string[];
  /** `output` as one bare string (default when there is one file and the input asked for no count) or an array. */
  outputShape?: 'string' | 'array';
  /** The prediction ends `failed` with this error text. */
  fail?: string;
  /** `metrics.predict_time` in seconds (default: the time spent processing). */
  predictTime?: number;
  /** `metrics.video_output_duration_seconds` (default `input.duration` for video outputs). */
  outputSeconds?: number;
  /** `output` as this value instead of file URLs (default for a transcription: a transcript with segments). */
  value?: unknown;
}

export interface ScenarioOptions {
  /** Wait before the first byte (headers included, unless keep-alives go first). */
  delayMs?: number;
  /** Wait between stream events. */
  chunkDelayMs?: number;
  /** Keep-alives before the first chunk where the protocol has them (DeepSeek comments / blank lines, Anthropic pings). */
  keepAlives?: number;
}

export interface Emulator {
  kind: EmulatorKind;
  /** Per the DECISIONS.md base-URL convention for that provider. */
  baseUrl: string;
  /** The key the emulator accepts; a wrong key gets the provider's real auth error. */
  apiKey: string;
  /** Every request received, in order (the same array object for the emulator's life). */
  requests: RecordedRequest[];
  /** The next request gets this scenario (FIFO); when the queue is empty the default applies. */
  enqueue(s: Scenario, o?: ScenarioOptions): void;
  /** null = the built-in default. */
  setDefault(s: Scenario | null, o?: ScenarioOptions): void;
  /** The next `count` accepted requests fail with `status` (the provider's real body for it). */
  failFirst(count: number, status: number, headers?: Record<string, string>): void;
  /** Requests with `key` get 429 with `retry-after` (the provider's real body) until unthrottled; they take no scenario. */
  throttle(key: string, retryAfterSeconds?: number): void;
  unthrottle(key: string): void;
  /** Clears queue, requests, throttled keys and default. */
  reset(): void;
  /** Closes the server and any hanging sockets. */
  close(): Promise<void>;
}

export interface StartOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 'emu-key'. */
  apiKey?: string;
  /** More keys the emulator accepts besides `apiKey` (a key pool); any other key is refused with the provider's auth error. */
  apiKeys?: string[];
  /** Record requests (default true). The CLI turns it off unless asked, so long benchmarks don't grow memory. */
  record?: boolean;
  /** Serve the `/__emulator/*` control routes (default false; the CLI turns them on). */
  control?: boolean;
  /**
   * Unscripted chat requests are answered as a model would (scripted-answers.ts): a tool call where tools
   * are offered, JSON valid against a requested schema. Default false: the echo `Hello from … You said: …`.
   */
  followRequests?: boolean;
}
