/**
 * The money path's contract: one atomic hold that also carries every limit check, then
 * exactly one settle or refund. Every billed route reaches it through the paid-run core
 * (src/billing/paid-run.ts); the SQLite and PostgreSQL stores implement it.
 * Money is integer micro-credits; times are Unix milliseconds.
 */
import type { HoldLimit, HoldRefusal } from './limits.ts';

// The refusal's shape and the trial rules belong to the limit table; re-exported for the money path's users.
export { TRIAL_RULES, type HoldRefusal, type TrialRules } from './limits.ts';

/** What a job is: one per billed route. */
/** `messages`: a chat run through the Messages route (the Anthropic format), shown apart in the request log. */
/** `responses`: a chat run through the Responses route (the OpenAI Responses format), shown apart in the request log. */
export type JobKind = 'chat' | 'messages' | 'responses' | 'embeddings' | 'image' | 'video' | 'speech' | 'transcription' | 'fine_tuning';

/**
 * Whether a run of each kind ends with its request. Such a run may be reserved in memory (docs/money-path.md):
 * nothing durable until it closes or has run `RECORD_AFTER_MS`. Media and fine-tuning runs outlive their request
 * (a restarted process adopts them), so they always take the durable hold.
 */
export const RUN_ENDS_WITH_REQUEST: Readonly<Record<JobKind, boolean>> = {
  chat: true,
  messages: true,
  responses: true,
  embeddings: true,
  image: false,
  video: false,
  speech: false,
  transcription: false,
  fine_tuning: false,
};

/** A run reserved in memory and still in flight this long after its hold is recorded as a durable hold. */
export const RECORD_AFTER_MS = 250;

/** A job's life: processing (held, running) → succeeded | failed | canceled. */
export type JobStatus = 'processing' | 'succeeded' | 'failed' | 'canceled';

/** Usage in the units the route bills: tokens, images, seconds, characters, GPU seconds… */
export type UsageUnits = Readonly<Record<string, number>>;

export interface NewHold {
  jobId: string;
  accountId: string;
  keyId: string | null;
  keyFamilyId: string | null;
  kind: JobKind;
  model: string;
  /** Micro-credits to reserve. */
  amount: number;
  at: number;
  /** The gateway process that owns the run (crash recovery, leases). */
  instanceId: string;
  /** The client address (trial rule per address); null when it cannot be determined. */
  clientAddress: string | null;
  /** False for fine-tuning: its runs never count toward a key's credit limits. */
  countsTowardKeyLimits: boolean;
  /**
   * Set by the paid-run core for a run that ends with its request: the store may reserve it in memory and
   * record it as a durable hold only if it is still in flight after this many ms. Unset: the durable hold.
   */
  recordAfterMs?: number;
}

export type HoldResult = { ok: true } | ({ ok: false } & HoldRefusal);

/**
 * One provider call of a run, as the job record keeps it (docs/operations.md "Routing"): never
 * a key, only its place in the provider's list.
 */
export interface JobAttempt {
  /** The catalog slug tried. */
  model: string;
  provider: string;
  /** The model's id at that provider (the deployment). */
  deployment: string;
  /** The key's place in the provider's comma-separated list, from 0. */
  key: number;
  /** The provider's HTTP status; 0 when none came (connection failure, the run stopped). */
  status: number;
  /** Our error code, when the attempt failed. */
  code?: string;
  /** Why another attempt followed: throttled, failed, key_refused, unavailable (then the next model is tried). */
  retry?: string;
  /** Milliseconds until the answer's head (or the failure). */
  ms: number;
}

/** How a run was routed, written with its close: the model that answered (when it is not the one held) and every attempt. */
export interface RouteFacts {
  model?: string;
  attempts?: readonly JobAttempt[];
}

export interface Settlement {
  /** Cost of the run in micro-credits; the charge is capped at the amount held. */
  cost: number;
  usage: UsageUnits;
  /** succeeded: the run ended normally; canceled: stopped early but billed (a stream closed by the client). */
  status: 'succeeded' | 'canceled';
  at: number;
  /** The job's report for GET /jobs/{id} (never secret, never the vectors). */
  output?: unknown;
  route?: RouteFacts;
}

export interface Refund {
  status: 'failed' | 'canceled';
  errorCode: string;
  /** What the client was answered (and why, for the operator): the dashboard's request detail. */
  errorMessage?: string;
  at: number;
  route?: RouteFacts;
}

/**
 * The money path: one atomic hold with every admission check, then one settle or refund. The
 * store's `money` part; the paid-run core (src/billing/paid-run.ts) calls nothing else.
 */
export interface MoneyStore {
  /** The limits its hold checks, in order (limits.ts): the refusals, admin fields and docs derive from the same rows. Absent: the shipped table. */
  readonly limits?: readonly HoldLimit[];
  /** Reserves credits, or refuses with the first failing check; nothing is created or charged on a refusal. */
  hold(hold: NewHold): Promise<HoldResult>;
  /** Bills a processing job (capped at its hold) and releases the rest; the amount charged (0 when it was no longer processing). */
  settle(jobId: string, settlement: Settlement): Promise<number>;
  /** Releases a processing job's whole hold; false when it was no longer processing. */
  refund(jobId: string, refund: Refund): Promise<boolean>;
}
